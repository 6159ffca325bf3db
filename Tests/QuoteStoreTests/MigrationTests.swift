import Foundation
import GRDB
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreCodec
import TestSupport
import Testing

@testable import QuoteStoreSQLite

@Suite("Schema migrations and the stored history")
struct MigrationTests {
    let directory = TemporaryDirectory()

    /// When the files of older schemas were written, in both forms.
    static let at = Date(timeIntervalSince1970: 1_700_000_000)
    static let milliseconds: Int64 = 1_700_000_000_000

    /// Quote `id`, priced (ready) at ``at``.
    static func ready(_ id: Int64) throws -> Quote {
        let request = try QuoteBuilder(StoreFixtures.submission()).build(in: .standard, at: at)
        return try Quote(id: QuoteID(id), request: request, submittedAt: at).priced(
            currency: Catalog.standard.currency, at: at)
    }

    /// Writes `ready` (quote 7) as the old schemas did: its row, and its two events as
    /// ``at``, the first with `submittedEventData` (the quote before v3's writes, nothing
    /// after).
    static func insertReady(_ ready: Quote, submittedEventData: Data, into db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO quotes (id, state, currency, submitted_at, updated_at, data)
                VALUES (7, 'ready', 'USD', ?1, ?1, ?2)
                """, arguments: [milliseconds, Data(QuoteCodec.encode(ready))])
        try db.execute(
            sql: """
                INSERT INTO events (at, type, quote_id, from_state, to_state, data)
                VALUES (?1, 'quote.submitted', 7, NULL, 'submitted', ?3), (?1, 'quote.ready', 7, 'submitted', 'ready', ?2)
                """, arguments: [milliseconds, Data(QuoteCodec.encode(ready)), submittedEventData])
    }

    @Test("a v1 file's history rows move into their quotes' rows, and later steps append to them")
    func historyMovesIntoTheQuoteRow() async throws {
        let (at, milliseconds) = (Self.at, Self.milliseconds)
        let ready = try Self.ready(7)
        // The file as schema v1 left it: a ready quote whose two steps are quote_history rows.
        do {
            let queue = try DatabaseQueue(path: directory.database)
            try SQLiteQuoteStore.migrator.migrate(queue, upTo: "v1: catalog, quotes, history, events")
            try await queue.write { db in
                try Self.insertReady(ready, submittedEventData: Data(QuoteCodec.encode(ready)), into: db)
                try db.execute(
                    sql: """
                        INSERT INTO quote_history (quote_id, seq, from_state, to_state, at)
                        VALUES (7, 1, NULL, 'submitted', ?1), (7, 2, 'submitted', 'ready', ?1)
                        """, arguments: [milliseconds])
            }
        }

        let store = try StoreFixtures.open(directory.database)
        let migrated = try #require(try await store.quote(QuoteID(7)))
        #expect(migrated.quote == ready)
        #expect(
            migrated.history == [
                StateChange(from: nil, to: .submitted, at: at, seq: 1),
                StateChange(from: .submitted, to: .ready, at: at, seq: 2),
            ])
        let tableLeft = try await DatabaseQueue(path: directory.database).read { db in
            try db.tableExists("quote_history")
        }
        #expect(!tableLeft)
        let customer = ready.request.customer
        for search in [customer.email.uppercased(), String(customer.name.prefix(2))] {
            let found = try await store.quotes(
                status: nil, customer: CustomerSearch(search), afterID: nil, limit: 10, examining: 100)
            #expect(
                found.quotes.map(\.id) == [QuoteID(7)],
                "a quote stored before the customer columns is found by \(search)")
        }

        let booked = try await store.apply([.book(QuoteID(7), mechanic: nil)])[0].get()
        let after = try #require(try await store.quote(QuoteID(7)))
        #expect(after.history.map(\.to) == [.submitted, .ready, .booked])
        #expect(after.history.last?.from == .ready)
        #expect(after.history.last?.seq == booked.events.first?.seq)
    }

    @Test(
        "a v2 file's quotes survive the v3 rebuild whole: ids go on from the highest, a booking still holds its mechanic, a key still answers once"
    )
    func quotesSurviveTheRebuild() async throws {
        let (at, milliseconds) = (Self.at, Self.milliseconds)
        let ready = try Self.ready(7)
        let mechanic = try #require(Catalog.standard.mechanic(named: "Joe Murphy"))
        let booked = try Self.ready(12).booked(with: mechanic, at: at)
        let history = HistoryCodec.appending(
            [
                StateChange(from: nil, to: .submitted, at: StoredTime.date(milliseconds), seq: 1),
                StateChange(from: .submitted, to: .ready, at: StoredTime.date(milliseconds), seq: 2),
            ], to: Data())
        // The file as schema v2 left it: a ready quote submitted with a key, and a booked one
        // holding its mechanic.
        do {
            let queue = try DatabaseQueue(path: directory.database)
            try SQLiteQuoteStore.migrator.migrate(queue, upTo: "v2: history in the quote row")
            try await queue.write { db in
                try db.execute(
                    sql: "INSERT INTO mechanics (id, name, skill, quote_id, free_since) VALUES (?, ?, ?, NULL, 0)",
                    arguments: [mechanic.id.rawValue, mechanic.name, mechanic.skill.rawValue])
                try db.execute(
                    sql: """
                        INSERT INTO quotes (id, state, idempotency_key, mechanic_id, currency, submitted_at, updated_at, data, history)
                        VALUES (7, 'ready', 'key-7', NULL, 'USD', ?1, ?1, ?2, ?4),
                               (12, 'booked', NULL, ?5, 'USD', ?1, ?1, ?3, ?4)
                        """,
                    arguments: [
                        milliseconds, Data(QuoteCodec.encode(ready)), Data(QuoteCodec.encode(booked)), Data(history),
                        mechanic.id.rawValue,
                    ])
                try db.execute(
                    sql: "UPDATE mechanics SET quote_id = 12, free_since = NULL WHERE id = ?",
                    arguments: [mechanic.id.rawValue])
            }
        }

        let store = try StoreFixtures.open(directory.database)
        #expect(try await store.quote(QuoteID(7))?.quote == ready)
        #expect(try await store.quote(QuoteID(12))?.quote == booked)
        #expect(try await store.integrityViolations().isEmpty)
        #expect(try await store.mechanics().first { $0.mechanic.id == mechanic.id }?.quote == QuoteID(12))

        let again = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "key-7", book: false)])[
            0
        ]
        .get()
        #expect(try again.replayed && again.changedQuote.id == QuoteID(7))
        let next = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "key-13", book: false)])[
            0
        ]
        .get()
        #expect(try next.changedQuote.id == QuoteID(13))

        let (plan, sequenced) = try await DatabaseQueue(path: directory.database).read { db in
            let plan = try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN SELECT data FROM quotes WHERE idempotency_key = 'key-13'"
            ).map { $0["detail"] as String }
            let sequenced = try String.fetchAll(db, sql: "SELECT name FROM sqlite_sequence")
            return (plan, sequenced)
        }
        #expect(plan.contains { $0.contains("quotes_by_idempotency_key") }, "\(plan)")
        #expect(!sequenced.contains("quotes"))
    }

    @Test(
        "a v3 log survives the v4 rebuild, and sequence numbers go on from the last ever handed out, even when pruning had emptied it",
        arguments: [false, true])
    func eventsSurviveTheRebuild(prunedEmpty: Bool) async throws {
        let ready = try Self.ready(7)
        // The file as schema v3 left it: quote 7's two events, seqs 1 and 2 (AUTOINCREMENT),
        // and, pruned, no event left but the sequence still at 2.
        do {
            let queue = try DatabaseQueue(path: directory.database)
            try SQLiteQuoteStore.migrator.migrate(
                queue, upTo: "v3: quote ids without AUTOINCREMENT, idempotency keys in a partial index")
            try await queue.write { db in
                try Self.insertReady(ready, submittedEventData: Data(), into: db)
                if prunedEmpty { try db.execute(sql: "DELETE FROM events") }
            }
        }

        let store = try StoreFixtures.open(directory.database)
        #expect(try await store.lastSequence() == 2)
        let kept = try await store.events(after: 0, limit: 10)
        if prunedEmpty {
            #expect(kept.isEmpty)
        } else {
            #expect(kept.map(\.seq) == [1, 2])
            #expect(kept.map(\.type) == ["quote.submitted", "quote.ready"])
            #expect(kept.last.map { if case .quote(_, let quote) = $0.kind { quote == ready } else { false } } == true)
        }
        let next = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: false)])[0]
            .get()
        #expect(next.events.map(\.seq) == [3, 4])
        #expect(try await store.events(after: 2, limit: 10).map(\.seq) == [3, 4])
        #expect(try await store.lastSequence() == 4)
        let autoincrement = try await DatabaseQueue(path: directory.database).read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'events'")
        }
        #expect(autoincrement?.contains("AUTOINCREMENT") == false)
    }

    @Test("a quote stored before the audit trail reads with no submitter; one stored after keeps it")
    func recordsBeforeTheAuditTrail() throws {
        let ready = try Self.ready(7)
        let signed = Quote(
            id: ready.id, request: ready.request, stage: ready.stage, submittedAt: ready.submittedAt,
            updatedAt: ready.updatedAt, submittedBy: "alice")
        #expect(try QuoteCodec.decodeQuote(QuoteCodec.encode(signed)).submittedBy == "alice")
        #expect(try QuoteCodec.decodeQuote(QuoteCodec.encode(signed)) == signed)
        // The record as written before the field existed: the same bytes without the last one.
        let older = QuoteCodec.encode(ready).dropLast()
        let read = try QuoteCodec.decodeQuote(Data(older))
        #expect(read == ready)
        #expect(read.submittedBy == nil)
    }

    @Test("a stored history step reads back as written, for every pair of states")
    func historyRoundTrips() async throws {
        let states: [QuoteStatus?] = [nil] + QuoteStatus.allCases
        let steps = states.enumerated().flatMap { index, from in
            QuoteStatus.allCases.map { to in
                StateChange(
                    from: from, to: to, at: StoredTime.date(-1 - Int64(index)), seq: Int64(index) << 40 | 12_345)
            }
        }
        let half = steps.count / 2
        let stored = HistoryCodec.appending(
            Array(steps[half...]), to: HistoryCodec.appending(Array(steps[..<half]), to: Data()))
        #expect(try HistoryCodec.decode(stored) == steps)
        #expect(try HistoryCodec.decode(Data()).isEmpty)
    }

    @Test("a new quote's history is its two first steps, as an empty history with them appended is")
    func submissionHistory() throws {
        for status in [QuoteStatus.ready, .pending] {
            let at = StoredTime.date(1_764_400_000_123)
            let bytes = HistoryCodec.submission(pricedTo: status, at: at, submittedSeq: 41, pricedSeq: 42)
            let steps = StateChange.submission(pricedTo: status, at: at, submittedSeq: 41, pricedSeq: 42)
            #expect(bytes == HistoryCodec.appending(steps, to: [UInt8]()))
            #expect(try HistoryCodec.decode(bytes) == steps)
        }
    }

    @Test(
        "a history past its bound keeps its first step and its latest ones",
        arguments: [[1, 1], [2, 1_100], [1_000, 30], [1_100], [1_023, 1], [1_024, 1], [3, 2_000, 5]]
            + [Array(repeating: 1, count: 1_030)])
    func historyIsBounded(_ chunks: [Int]) throws {
        let total = chunks.reduce(0, +)
        let steps = (0..<total).map {
            StateChange(from: $0 == 0 ? nil : .booked, to: .booked, at: StoredTime.date(Int64($0)), seq: Int64($0) + 1)
        }
        var stored: [UInt8] = []
        var start = 0
        for chunk in chunks {
            stored = HistoryCodec.appending(Array(steps[start..<(start + chunk)]), to: stored)
            start += chunk
        }
        let expected =
            total <= HistoryCodec.maximumSteps ? steps : [steps[0]] + steps.suffix(HistoryCodec.maximumSteps - 1)
        #expect(try HistoryCodec.decode(stored) == expected)
        #expect(stored.count <= 1 + HistoryCodec.maximumSteps * HistoryCodec.entrySize)
    }

    @Test("a truncated or unknown stored history is refused, not misread")
    func corruptHistoryIsRefused() async throws {
        let stored = HistoryCodec.appending(
            [StateChange(from: .ready, to: .booked, at: StoredTime.date(4), seq: 3)], to: Data())
        #expect(throws: QuoteCodec.CorruptRecord.self) { try HistoryCodec.decode(stored.dropLast()) }
        var unknownState = stored
        unknownState[unknownState.startIndex + 2] = 9
        #expect(throws: QuoteCodec.CorruptRecord.self) { try HistoryCodec.decode(unknownState) }
        var otherVersion = stored
        otherVersion[otherVersion.startIndex] = 2
        #expect(throws: QuoteCodec.CorruptRecord.self) { try HistoryCodec.decode(otherVersion) }
        // A time beyond year 9999 would not read back as the same number: corrupt, not misread.
        var farFuture = stored
        farFuture.replaceSubrange(
            (farFuture.startIndex + 11)..<(farFuture.startIndex + 19),
            with: withUnsafeBytes(of: (StoredTime.range.upperBound + 1).littleEndian) { Data($0) })
        #expect(throws: QuoteCodec.CorruptRecord.self) { try HistoryCodec.decode(farFuture) }
    }
}
