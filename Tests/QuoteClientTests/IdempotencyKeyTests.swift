import Foundation
import QuoteClient
import Testing

@Suite("Idempotency keys")
struct IdempotencyKeyTests {
    @Test("A key is a version 7 UUID whose first 48 bits are the time in milliseconds")
    func versionSevenWithTheTime() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123)
        let key = IdempotencyKey.make(at: date)
        let uuid = try #require(UUID(uuidString: key))
        #expect(key == key.lowercased())
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        let time = bytes[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        #expect(time == 1_795_000_000_123)
        #expect(bytes[6] >> 4 == 7, "version")
        #expect(bytes[8] >> 6 == 0b10, "variant")
    }

    @Test("Keys made later sort after keys made earlier, and keys made at once all differ")
    func orderedAndUnique() throws {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let earlier = (0..<100).map { _ in IdempotencyKey.make(at: start) }
        let later = (0..<100).map { _ in IdempotencyKey.make(at: start + 0.002) }
        #expect(Set(earlier + later).count == 200)
        #expect(try #require(earlier.max()) < #require(later.min()))
    }

    @Test(
        "A clock before 1970, past the 48 bits or not a number still makes a valid key",
        arguments: [-1_000.0, 1e16, .nan, .infinity])
    func clockOutOfRange(seconds: Double) throws {
        let key = IdempotencyKey.make(at: Date(timeIntervalSince1970: seconds))
        let uuid = try #require(UUID(uuidString: key))
        let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
        #expect(bytes[0..<6].allSatisfy { $0 == 0 })
        #expect(bytes[6] >> 4 == 7)
    }
}
