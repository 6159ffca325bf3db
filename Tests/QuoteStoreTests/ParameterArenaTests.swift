import Foundation
import GRDB
import Testing

@testable import QuoteStoreSQLite

/// Text and blob parameters bound from the transaction's arena reach the rows exactly, whatever
/// their size, and the arena's memory stays bounded.
@Suite("The SQLite writer's parameter arena")
struct ParameterArenaTests {
    /// Strings from empty to past the arena's first room, and past its maximum.
    static let sizes = [0, 1, 15, 16, 200, 4_000, 20_000, ParameterArena.maximumBytes + 1]

    @Test("strings and blobs of every size are stored as bound, each statement's values apart from the last's")
    func valuesReachTheRows() throws {
        let database = try DatabaseQueue()
        let arena = ParameterArena()
        try database.write { db in
            try db.execute(
                sql: "CREATE TABLE t (n INTEGER, text TEXT NOT NULL, other TEXT NOT NULL, blob BLOB NOT NULL)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t VALUES (?, ?, ?, ?)")
            // Twice over: the first round grows the room as it goes, the second finds it grown.
            for round in 0..<2 {
                for size in Self.sizes {
                    let text = String(repeating: "é", count: size / 2) + String(repeating: "a", count: size % 2)
                    try insert.execute(in: arena) {
                        $0.bind(Int64(round * 100 + size))
                        $0.bind(text)
                        $0.bind("other \(size)")
                        $0.bind(Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) }))
                    }
                }
            }
            arena.unbind([insert])
            for round in 0..<2 {
                for size in Self.sizes {
                    let row = try #require(
                        try Row.fetchOne(db, sql: "SELECT * FROM t WHERE n = ?", arguments: [round * 100 + size]))
                    let text: String = row["text"]
                    let other: String = row["other"]
                    let blob: Data = row["blob"]
                    #expect(text == String(repeating: "é", count: size / 2) + String(repeating: "a", count: size % 2))
                    #expect(other == "other \(size)")
                    #expect(blob == Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ round) }))
                }
            }
        }
    }

    @Test("a value that finds no room is refused, and the room grows for the next statement, never past its maximum")
    func roomGrowsAtResetUpToTheMaximum() {
        let arena = ParameterArena()
        arena.reset()
        let small = [UInt8](repeating: 7, count: 10_000)
        let first = small.withUnsafeBytes { arena.copy($0) }
        let second = small.withUnsafeBytes { arena.copy($0) }
        #expect(first != nil)
        #expect(second == nil, "a 16 KiB room has no place for 20,000 bytes")
        #expect(first.map { Array(UnsafeRawBufferPointer(start: $0, count: 10_000)) } == small)
        arena.reset()
        #expect(small.withUnsafeBytes { arena.copy($0) } != nil)
        #expect(small.withUnsafeBytes { arena.copy($0) } != nil, "grown at the reset to what was asked")
        let huge = [UInt8](repeating: 1, count: ParameterArena.maximumBytes + 1)
        #expect(huge.withUnsafeBytes { arena.copy($0) } == nil)
        arena.reset()
        #expect(huge.withUnsafeBytes { arena.copy($0) } == nil, "never more than the maximum")
        #expect(small.withUnsafeBytes { arena.copy($0) } != nil)
    }
}
