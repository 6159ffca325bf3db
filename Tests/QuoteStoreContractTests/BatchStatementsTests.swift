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
        for _ in 0..<2 { Self.appendEvent(to: &rows.events, seq: nil) }
        rows.events.seq.append(1)
        let refusal = #expect(throws: StoreError.self) { _ = try rows.query }
        #expect(refusal?.message.contains("integrity") == true)
        rows.events.seq.append(2)
        #expect(throws: Never.self) { _ = try rows.query }
        // Within a quote part too: a changed quote with no history.
        Self.appendQuote(to: &rows.updated.quote, history: false)
        #expect(throws: StoreError.self) { _ = try rows.query }
        rows.updated.quote.history.append(bytes: [1])
        #expect(throws: Never.self) { _ = try rows.query }
    }

    @Test("the parts may be as long as they need: one new quote, two changed, three events")
    func partsOfTheirOwnLengths() throws {
        var rows = BatchStatements.Rows()
        Self.appendQuote(to: &rows.inserted.quote)
        rows.inserted.idempotencyKey.append("key")
        rows.inserted.currency.append("EUR")
        rows.inserted.submittedAt.append(1)
        rows.inserted.customerEmail.append(nil)
        rows.inserted.customerName.append("Ada")
        for _ in 0..<2 { Self.appendQuote(to: &rows.updated.quote) }
        for seq in 1...3 { Self.appendEvent(to: &rows.events, seq: Int64(seq)) }
        #expect(try rows.query.binds.count == 34)
    }

    @Test("the statement binds one value for each of its parameters, $1 to $34, each used once")
    func everyParameterIsBoundOnce() throws {
        let sql = BatchStatements.Rows.sql
        var numbers: [Int] = []
        var rest = Substring(sql)
        while let dollar = rest.firstIndex(of: "$") {
            rest = rest[rest.index(after: dollar)...]
            let digits = rest.prefix(while: \.isNumber)
            if let number = Int(digits) { numbers.append(number) }
        }
        #expect(numbers == Array(1...34))
        #expect(try BatchStatements.Rows().query.binds.count == 34)
    }

    /// Appends one event's row to `events`, its number left out when `seq` is `nil`.
    private static func appendEvent(to events: inout BatchStatements.InsertEvents, seq: Int64?) {
        if let seq { events.seq.append(seq) }
        events.at.append(1)
        events.type.append("quote.priced")
        events.quote.append(1)
        events.mechanic.append(nil)
        events.from.append(nil)
        events.to.append("ready")
        events.data.append(bytes: [1])
        events.actor.append(nil)
    }

    /// Appends one quote's row to `columns`, its history left out unless `history`.
    private static func appendQuote(to columns: inout BatchStatements.QuoteColumns, history: Bool = true) {
        columns.id.append(1)
        columns.state.append("ready")
        columns.mechanic.append(nil)
        columns.priceCents.append(100)
        columns.updatedAt.append(1)
        columns.data.append(bytes: [1])
        if history { columns.history.append(bytes: [1]) }
        columns.waitSeq.append(nil)
        columns.waitSkill.append(nil)
        columns.waitMechanic.append(nil)
    }
}
