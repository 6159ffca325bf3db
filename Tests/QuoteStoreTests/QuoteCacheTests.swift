import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

@testable import QuoteStoreSQLite

/// The writer's cache of recent quotes never answers with a state the rows do not hold.
@Suite("The SQLite writer's quote cache")
struct QuoteCacheTests {
    let directory = TemporaryDirectory()

    /// Submits one quote through the rules and returns its id.
    private func submitted(_ store: SQLiteQuoteStore) async throws -> QuoteID {
        let outcome = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: false)])
        return try outcome[0].get().changedQuote.id
    }

    /// Quote `id` as a new transaction of `store` reads it.
    private func read(_ id: QuoteID, in store: SQLiteQuoteStore) async throws -> Quote? {
        try await store.write { transaction throws(StoreError) in try await transaction.quote(id) }.value
    }

    @Test("a quote another connection changed is read as changed, not as this writer last saw it")
    func anotherConnectionsCommitIsSeen() async throws {
        let catalog = try StoreFixtures.catalog(mechanics: 2)
        let first = try StoreFixtures.open(directory.database, catalog: catalog)
        let second = try StoreFixtures.open(directory.database, catalog: catalog)
        let id = try await submitted(first)
        // The first writer books it: the booked quote is what its cache holds now.
        let booked = try await first.apply([.book(id, mechanic: nil)], catalog: catalog)
        #expect(try booked[0].get().changedQuote.status == .booked)
        #expect(try await read(id, in: first)?.status == .booked)
        // The second completes it; the first must not act on the booked quote it remembers.
        let completed = try await second.apply([.complete(id)], catalog: catalog)
        #expect(try completed[0].get().changedQuote.status == .completed)
        #expect(try await read(id, in: first)?.status == .completed)
        let cancel = try await first.apply([.cancel(id, reason: "too late")], catalog: catalog)
        #expect(cancel[0].failure?.code == .illegalTransition)
        #expect(try await first.integrityViolations().isEmpty)
    }

    @Test("a transaction that fails after changing a quote leaves the next one reading the rows")
    func rollbackIsForgotten() async throws {
        let store = try StoreFixtures.open(directory.database)
        let id = try await submitted(store)
        let original = try #require(try await read(id, in: store))
        await #expect(throws: StoreError.self) {
            _ = try await store.write { transaction throws(StoreError) in
                guard let quote = try await transaction.quote(id) else { throw StoreError(.database, "no quote") }
                let cancelled = try Self.cancelled(quote)
                try await transaction.update(
                    cancelled, step: StateChange(from: quote.status, to: .cancelled, at: Date(), seq: 1_000))
                #expect(try await transaction.quote(id)?.status == .cancelled)
                throw StoreError(.database, "the test fails the transaction")
            }
        }
        #expect(try await read(id, in: store) == original)
    }

    @Test("a change rolled back to its savepoint is not read back, in its transaction or after")
    func savepointRollbackIsForgotten() async throws {
        let store = try StoreFixtures.open(directory.database)
        let id = try await submitted(store)
        let original = try #require(try await read(id, in: store))
        let inside = try await store.write { transaction throws(StoreError) in
            guard let quote = try await transaction.quote(id) else { throw StoreError(.database, "no quote") }
            try await transaction.savepoint()
            let cancelled = try Self.cancelled(quote)
            try await transaction.update(
                cancelled, step: StateChange(from: quote.status, to: .cancelled, at: Date(), seq: 1_000))
            try await transaction.rollbackToSavepoint()
            return try await transaction.quote(id)
        }.value
        #expect(inside == original)
        #expect(try await read(id, in: store) == original)
    }

    @Test("a booking and its completion are served from the cache, and the history they write is whole")
    func bookAndCompleteFromTheCache() async throws {
        let catalog = try StoreFixtures.catalog(mechanics: 1)
        let store = try StoreFixtures.open(directory.database, catalog: catalog)
        let id = try await submitted(store)
        #expect(store.cachedQuotes == 0)  // new quotes are not kept
        _ = try await store.apply([.book(id, mechanic: nil)], catalog: catalog)[0].get()
        #expect(store.cachedQuotes == 1)
        let completed = try await store.apply([.complete(id)], catalog: catalog)[0].get()
        #expect(try completed.changedQuote.status == .completed)
        let record = try #require(try await store.quote(id))
        #expect(record.history.map(\.to) == [.submitted, .ready, .booked, .completed])
        #expect(try await read(id, in: store) == record.quote)

        var configuration = SQLiteQuoteStore.Configuration()
        configuration.quoteCacheBytes = 0
        let other = TemporaryDirectory()
        let uncached = try SQLiteQuoteStore(
            path: other.database, catalog: catalog, configuration: configuration, logger: StoreFixtures.logger)
        let second = try await submitted(uncached)
        _ = try await uncached.apply([.book(second, mechanic: nil)], catalog: catalog)[0].get()
        #expect(uncached.cachedQuotes == 0)
    }

    @Test("one quote kept over and over takes one entry and a bounded eviction order")
    func keptAgainStaysSmall() throws {
        let quote = try #require(try Self.sampleQuote())
        let entry = QuoteCache.Entry(quote: quote, stored: 400, history: [UInt8](repeating: 0, count: 40))
        var cache = QuoteCache(budget: 1 << 20)
        for round in 1...10_000 {
            cache.begin(dataVersion: 1)
            cache.keep(7, entry)
            if round % 2 == 0 { cache.commit() } else { cache.discardTransaction() }
        }
        #expect(cache.count == 1)  // the last round committed
        #expect(cache.orderCount <= 1_026)
        cache.begin(dataVersion: 1)
        cache.keep(7, entry)
        cache.keep(7, entry)
        cache.commit()
        #expect(cache.count == 1)
        #expect(cache.orderCount <= 1_026)
    }

    @Test("the cache holds no more than its budget, however many quotes pass through it")
    func boundedInBytes() throws {
        let quote = try #require(try Self.sampleQuote())
        let entry = QuoteCache.Entry(quote: quote, stored: 400, history: [UInt8](repeating: 0, count: 40))
        let budget = 20 * entry.cost
        var cache = QuoteCache(budget: budget)
        for id in 1...1_000 {
            cache.begin(dataVersion: 1)
            cache.keep(Int64(id), entry)
            cache.commit()
            #expect(cache.count <= 20)
        }
        // The newest are the ones kept.
        #expect(cache.entry(1_000) != nil)
        #expect(cache.entry(1) == nil)
        // Another connection's commit empties it.
        cache.begin(dataVersion: 2)
        #expect(cache.count == 0)
        // A quote larger than the budget is not kept at all.
        var small = QuoteCache(budget: entry.cost - 1)
        small.begin(dataVersion: 1)
        small.keep(1, entry)
        #expect(small.count == 0)
    }

    private static func cancelled(_ quote: Quote) throws(StoreError) -> Quote {
        do {
            return try quote.cancelled(reason: "test", at: Date())
        } catch {
            throw StoreError(.database, "\(error)")
        }
    }

    private static func sampleQuote() throws -> Quote? {
        let request = try QuoteBuilder(StoreFixtures.submission()).build(in: .standard, at: Date())
        return Quote(id: QuoteID(1), request: request, submittedAt: Date(), submittedBy: nil)
    }
}
