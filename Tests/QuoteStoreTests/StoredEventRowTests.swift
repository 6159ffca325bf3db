import Foundation
import QuoteCore
import QuoteStore
import QuoteStoreCodec
import Testing

/// How a new quote's `quote.submitted` is read back, in each layout a store may hold it: no
/// row of its own, a bare row, or (files from before either) a row with its own data.
@Suite("Reading a new quote's first two events from the log")
struct StoredEventRowTests {
    /// How a submission's two events are laid out in the rows.
    enum Layout: CaseIterable, CustomTestStringConvertible {
        case oneRow, bareRow, fullRow

        var testDescription: String {
            switch self {
            case .oneRow: "the priced row alone"
            case .bareRow: "a bare row, then the priced row"
            case .fullRow: "a submitted row with its data, then the priced row"
            }
        }
    }

    static let milliseconds: Int64 = 1_700_000_000_000

    /// Quote `id`, submitted then priced to ready.
    static func quotes(_ id: Int64) throws -> (submitted: Quote, priced: Quote) {
        let at = StoredTime.date(milliseconds)
        let request = try QuoteBuilder(StoreFixtures.submission()).build(in: .standard, at: at)
        let submitted = Quote(id: QuoteID(id), request: request, submittedAt: at, submittedBy: "alice")
        return (submitted, try submitted.priced(currency: Catalog.standard.currency, at: at))
    }

    /// The rows of quote `id`'s two events, the priced one at `seq`, laid out as `layout`.
    static func rows(_ layout: Layout, quote id: Int64, seq: Int64) throws -> [StoredEventRow] {
        let (submitted, priced) = try quotes(id)
        let pricedRow = StoredEventRow(
            seq: seq, at: milliseconds, type: "quote.ready", quote: id, from: "submitted",
            data: Data(QuoteCodec.encode(priced)), by: "alice")
        func first(_ data: Data) -> StoredEventRow {
            StoredEventRow(
                seq: seq - 1, at: milliseconds, type: "quote.submitted", quote: id, from: nil, data: data, by: "alice")
        }
        return switch layout {
        case .oneRow: [pricedRow]
        case .bareRow: [first(Data()), pricedRow]
        case .fullRow: [first(Data(QuoteCodec.encode(submitted))), pricedRow]
        }
    }

    /// The seqs and types of `events`.
    static func summary(_ events: [StoredEvent]) -> [String] {
        events.map { "\($0.seq) \($0.type)" }
    }

    @Test("both events are read, the first back at its submitted state", arguments: Layout.allCases)
    func bothEventsAreRead(layout: Layout) throws {
        let events = try StoredEventRow.page(try Self.rows(layout, quote: 7, seq: 2), after: 0, limit: 10)
        #expect(Self.summary(events) == ["1 quote.submitted", "2 quote.ready"])
        let (submitted, priced) = try Self.quotes(7)
        #expect(events.map(\.quote) == [submitted, priced])
        #expect(events.map(\.by) == ["alice", "alice"])
        #expect(events.map(\.at) == [StoredTime.date(Self.milliseconds), StoredTime.date(Self.milliseconds)])
    }

    @Test("a page after the submitted event starts at the priced one", arguments: Layout.allCases)
    func aPageAfterTheFirstEventSkipsIt(layout: Layout) throws {
        // The store reads rows after `after`: the first row of the pair is not among them.
        let rows = try Self.rows(layout, quote: 7, seq: 2).filter { $0.seq > 1 }
        #expect(Self.summary(try StoredEventRow.page(rows, after: 1, limit: 10)) == ["2 quote.ready"])
    }

    @Test("pages of one event read each of the two in turn", arguments: Layout.allCases)
    func pagesOfOneEventMoveOn(layout: Layout) throws {
        let rows = try Self.rows(layout, quote: 7, seq: 2) + (try Self.rows(layout, quote: 8, seq: 4))
        var after: Int64 = 0
        var read: [String] = []
        while true {
            // As the stores read: the rows after `after`, one more than the page.
            let page = try StoredEventRow.page(
                Array(rows.filter { $0.seq > after }.prefix(StoredEventRow.rowsToRead(forPage: 1))), after: after,
                limit: 1)
            guard let last = page.last else { break }
            #expect(page.count == 1)
            read += Self.summary(page)
            after = last.seq
        }
        #expect(read == ["1 quote.submitted", "2 quote.ready", "3 quote.submitted", "4 quote.ready"])
    }

    @Test("a page of every layout at once reads each quote's two events in order")
    func layoutsMixOnOnePage() throws {
        let rows = try Layout.allCases.enumerated().flatMap { index, layout in
            try Self.rows(layout, quote: Int64(7 + index), seq: Int64(2 * index + 2))
        }
        let events = try StoredEventRow.page(rows, after: 0, limit: 10)
        #expect(events.map(\.seq) == Array(1...6))
        #expect(events.map { $0.quote?.id.rawValue } == [7, 7, 8, 8, 9, 9])
    }

    @Test("a page of no events reads none")
    func anEmptyPage() throws {
        #expect(try StoredEventRow.page(try Self.rows(.oneRow, quote: 7, seq: 2), after: 0, limit: 0).isEmpty)
    }

    @Test("a bare row after a full page is left for the next one; a bare row that ends the log is corrupt")
    func aBareRowAtTheEnd() throws {
        let bare = try Self.rows(.bareRow, quote: 8, seq: 4)[0]
        let before = try Self.rows(.oneRow, quote: 7, seq: 2)
        // Two rows read for a page of one, full before the bare row.
        #expect(Self.summary(try StoredEventRow.page(before + [bare], after: 1, limit: 1)) == ["2 quote.ready"])
        // Fewer rows than asked for: the log ends on it, without the row it is read from.
        #expect(throws: QuoteCodec.CorruptRecord.self) {
            try StoredEventRow.page(before + [bare], after: 1, limit: 5)
        }
    }

    @Test("a bare row followed by something other than its quote's priced event is corrupt")
    func aBareRowWithoutItsQuoteIsCorrupt() throws {
        let bare = StoredEventRow(
            seq: 1, at: Self.milliseconds, type: "quote.submitted", quote: 7, from: nil, data: Data(), by: nil)
        let other = try Self.rows(.oneRow, quote: 8, seq: 2)
        #expect(throws: QuoteCodec.CorruptRecord.self) {
            try StoredEventRow.page([bare] + other, after: 0, limit: 10)
        }
    }
}
