import NIOCore
import PostgresNIO
import QuoteStore
import Testing

@testable import QuoteStorePostgres

/// The arrays a batch's rows are bound as (`ColumnValues`), byte for byte as PostgreSQL's
/// `array_recv` reads them, and the check that a statement's columns are all as long. The
/// store contract suite writes them to a real server; these pin the layout itself.
@Suite("The PostgreSQL store's batch columns")
struct BatchStatementsTests {
    /// `column` as bound.
    private static func bytes<Element>(_ column: ColumnValues<Element>) -> [UInt8] {
        var buffer = ByteBuffer()
        column.encode(into: &buffer, context: .default)
        return Array(buffer.readableBytesView)
    }

    private static func int32(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
    private static func int64(_ value: Int64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    @Test("bigint values and a NULL are one dimension from 1, each value its length then its bytes, a NULL -1")
    func bigintsWithANull() {
        var column = ColumnValues<Int64>()
        column.append(7)
        column.append(nil)
        column.append(-2)
        let expected =
            Self.int32(1) + Self.int32(1) + Self.int32(Int32(bitPattern: Int64.psqlType.rawValue))
            + Self.int32(3) + Self.int32(1)
            + Self.int32(8) + Self.int64(7) + Self.int32(-1) + Self.int32(8) + Self.int64(-2)
        #expect(Self.bytes(column) == expected)
        #expect(column.count == 3)
    }

    @Test("text, int and bytea values are written as their bytes, and no NULL means the flag is 0")
    func textIntAndBytea() {
        var text = ColumnValues<String>()
        text.append("été")
        let encodedText = Array("été".utf8)
        #expect(
            Self.bytes(text)
                == Self.int32(1) + Self.int32(0) + Self.int32(Int32(bitPattern: String.psqlType.rawValue))
                + Self.int32(1) + Self.int32(1) + Self.int32(Int32(encodedText.count)) + encodedText)
        var small = ColumnValues<Int32>()
        small.append(5)
        #expect(Array(Self.bytes(small).suffix(8)) == Self.int32(4) + Self.int32(5))
        var bytea = ColumnValues<ByteBuffer>()
        bytea.append(bytes: [0, 255, 1])
        bytea.append(bytes: [])
        #expect(Array(Self.bytes(bytea).suffix(11)) == Self.int32(3) + [0, 255, 1] + Self.int32(0))
    }

    @Test("an empty column is an array of no dimension")
    func emptyColumn() {
        #expect(
            Self.bytes(ColumnValues<Int64>())
                == Self.int32(0) + Self.int32(0) + Self.int32(Int32(bitPattern: Int64.psqlType.rawValue)))
    }

    @Test("a statement whose columns are not all as long is refused, not sent to be padded with NULLs")
    func columnsOfDifferentLengthsAreRefused() throws {
        var rows = BatchStatements.Rows()
        for column in 0..<2 {
            rows.events.at.append(Int64(column))
            rows.events.type.append("quote.priced")
            rows.events.quote.append(1)
            rows.events.mechanic.append(nil)
            rows.events.from.append(nil)
            rows.events.to.append("ready")
            rows.events.data.append(bytes: [1])
            rows.events.actor.append(nil)
        }
        rows.events.seq.append(1)
        let refusal = #expect(throws: StoreError.self) { _ = try rows.query }
        #expect(refusal?.message.contains("integrity") == true)
        rows.events.seq.append(2)
        #expect(throws: Never.self) { _ = try rows.query }
        // Parts need not be as long as each other: no quote here, two events.
        #expect(rows.inserted.isEmpty && rows.updated.quote.count == 0)
    }
}
