import Foundation
import GRDB
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite
import TestSupport
import Testing

/// The SQLite store holds a transaction's new quotes and writes them several to a statement:
/// held or not, what a transaction is told is what the file holds after its commit.
@Suite("The SQLite store's held submissions")
struct HeldRowsTests {
    let directory = TemporaryDirectory()

    /// `make` for `insertSubmission`: one request, submitted and priced at one instant.
    static func maker() throws -> @Sendable (QuoteID) -> (submitted: Quote, priced: Quote) {
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        let request = try QuoteBuilder(StoreFixtures.submission()).build(in: .standard, at: at)
        let stage = try Quote(id: QuoteID(1), request: request, submittedAt: at, submittedBy: nil)
            .priced(currency: Catalog.standard.currency, at: at).stage
        return { id in
            (
                Quote(id: id, request: request, submittedAt: at, submittedBy: nil),
                Quote(id: id, request: request, stage: stage, submittedAt: at, updatedAt: at, submittedBy: nil)
            )
        }
    }

    @Test(
        "a submission held inside a savepoint that is rolled back is never written, and its id and numbers go to the next"
    )
    func rolledBackWhileHeld() async throws {
        let store = try StoreFixtures.open(directory.database)
        let make = try Self.maker()
        let committed = try await store.write { transaction throws(StoreError) in
            var kept: [(Quote, [StoredEvent])] = []
            if case .inserted(let quote, let events) = try await transaction.insertSubmission(
                idempotencyKey: nil, by: nil, make)
            {
                kept.append((quote, events))
            }
            try await transaction.savepoint()
            _ = try await transaction.insertSubmission(idempotencyKey: "dropped", by: nil, make)
            try await transaction.rollbackToSavepoint()
            if case .inserted(let quote, let events) = try await transaction.insertSubmission(
                idempotencyKey: nil, by: nil, make)
            {
                kept.append((quote, events))
            }
            return kept.map { QuoteAndEvents(quote: $0.0, events: $0.1) }
        }
        let kept = committed.value
        #expect(kept.map(\.quote.id) == [QuoteID(1), QuoteID(2)])
        #expect(kept.flatMap(\.events).map(\.seq) == [1, 2, 3, 4])
        #expect(try await store.events(after: 0, limit: 10) == kept.flatMap(\.events))
        #expect(try await store.quote(idempotencyKey: "dropped") == nil)
        #expect(try await store.quote(QuoteID(2))?.quote == kept[1].quote)
        #expect(try await store.counts().values.reduce(0, +) == 2)
    }

    @Test(
        "a key found taken only when the batch commits is answered as a replay, and the batch's new quotes are stored once"
    )
    func keyTakenAtCommit() async throws {
        let store = try StoreFixtures.open(directory.database)
        let first = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "key-1", book: false)])[
            0
        ].get()
        let before = try await store.lastSequence()
        // No statement after the last submission: only the commit writes the held rows.
        let results = try await store.apply([
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(), idempotencyKey: "key-2", book: false),
            .submit(StoreFixtures.submission(), idempotencyKey: "key-1", book: false),
        ])
        let outcomes = try results.map { try $0.get() }
        #expect(outcomes.map(\.replayed) == [false, false, true])
        #expect(outcomes[2].quote == first.quote)
        let firstID = try first.changedQuote.id.rawValue
        #expect(try outcomes[0..<2].map { try $0.changedQuote.id.rawValue } == [firstID + 1, firstID + 2])
        let returned = outcomes.flatMap(\.events)
        #expect(returned.map(\.seq) == Array((before + 1)...(before + 4)))
        #expect(try await store.events(after: before, limit: 10) == returned)
        #expect(try await store.quote(idempotencyKey: "key-2") == outcomes[1].quote)
        #expect(try await store.counts().values.reduce(0, +) == 3)
    }

    @Test("a held quote the database refuses for another reason fails its whole batch, which leaves nothing behind")
    func refusedWhenWritten() async throws {
        var store = try StoreFixtures.open(directory.database)
        let first = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: false)])[0]
            .get()
        let before = try await store.lastSequence()
        try tamper(directory.database) { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER refuse_boom BEFORE INSERT ON quotes WHEN NEW.customer_name LIKE '%boom%'
                    BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END
                    """)
        }
        store = try StoreFixtures.open(directory.database)
        await #expect(throws: StoreError.self) {
            _ = try await store.apply([
                .submit(StoreFixtures.submission(), idempotencyKey: "fine", book: false),
                .submit(StoreFixtures.submission(name: "Boom Boom"), idempotencyKey: nil, book: false),
            ])
        }
        #expect(try await store.lastSequence() == before)
        #expect(try await store.quote(idempotencyKey: "fine") == nil)
        #expect(try await store.counts().values.reduce(0, +) == 1)
        let next = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "fine", book: false)])[0]
            .get()
        #expect(try next.changedQuote.id.rawValue == first.changedQuote.id.rawValue + 1)
        #expect(!next.replayed)
    }
}

/// A quote and its events, as a transaction's body returns them.
private struct QuoteAndEvents: Sendable {
    var quote: Quote
    var events: [StoredEvent]
}
