import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

@testable import QuoteStorePostgres

/// What the PostgreSQL store acknowledges depends on how the server commits.
@Suite("PostgreSQL durability")
struct PostgresDurabilityTests {
    @Test("a database that answers COMMIT before flushing it (synchronous_commit off) gets no write acknowledged")
    func asynchronousCommitIsRefused() async throws {
        let database = try PostgresDatabase()
        let name = String(database.url.split(separator: "/").last ?? "")
        // Every connection opened to this database from here on commits asynchronously.
        _ = try PostgresCluster.start().sql("ALTER DATABASE \(name) SET synchronous_commit = off")
        let clock = TestClock()
        do {
            // Opening may commit (the catalog), and so be refused already.
            let store = try await database.open(catalog: .standard, clock: clock, retention: .init())
            let results = try await Rulebook().apply(
                [.submit(Contract.submission(), idempotencyKey: nil, book: false)], catalog: .standard, to: store,
                at: clock.now)
            Issue.record("a write was acknowledged: \(results)")
        } catch let error as StoreError {
            #expect(error.code == .unavailable)
            #expect(error.outcomeUnknown, "the commit happened: its outcome is unknown")
            #expect(error.message.contains("synchronous_commit is off"), "\(error)")
        }
    }

    @Test(
        "a batch whose rows fail as it commits (another daemon took its idempotency key) applies nothing, is known not applied, and leaves its connection usable"
    )
    func rowsRefusedAtTheEndAreNotApplied() async throws {
        let contract = try await Contract(.postgres)
        let other = try await contract.another()
        let last = try await contract.store.lastSequence()
        let checked = try CheckedSubmission(Contract.submission(), in: contract.catalog, at: contract.clock.now)
        let failure = await #expect(throws: StoreError.self) {
            _ = try await contract.store.write { transaction throws(StoreError) in
                let results = try await contract.rules.applyBatch(
                    requests: [CheckedRequest(.submit(checked, idempotencyKey: "taken", book: false), by: .anonymous)],
                    catalog: .standard, in: transaction
                ).results
                // The key was free when this transaction looked; another daemon commits it now.
                do {
                    _ = try await contract.apply(
                        [.submit(Contract.submission(), idempotencyKey: "taken", book: false)], on: other)[0].get()
                } catch {
                    throw StoreError(.database, "the other daemon's submission failed: \(error)")
                }
                return results
            }
        }
        #expect(failure?.code == .database)
        #expect(failure?.outcomeUnknown == false, "a statement before COMMIT failed: the transaction rolled back")
        #expect(failure?.message.contains("23505") == true, "\(String(describing: failure))")
        // The other daemon's quote and events alone.
        #expect(try await contract.store.lastSequence() == last + 2)
        #expect(try await contract.store.counts().values.reduce(0, +) == 1)
        // The connection went back to the pool outside any transaction: later writes commit.
        for _ in 0..<3 {
            _ = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
        }
        #expect(try await contract.store.lastSequence() == last + 8)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test(
        "a batch whose last statement could not be built (the abort sent in its place) applies nothing and is known not applied"
    )
    func abortedBatchIsNotApplied() async throws {
        let contract = try await Contract(.postgres)
        let last = try await contract.store.lastSequence()
        let checked = try CheckedSubmission(Contract.submission(), in: contract.catalog, at: contract.clock.now)
        let failure = await #expect(throws: StoreError.self) {
            _ = try await contract.store.write { transaction throws(StoreError) in
                let results = try await contract.rules.applyBatch(
                    requests: [
                        CheckedRequest(.submit(checked, idempotencyKey: "aborted", book: false), by: .anonymous)
                    ],
                    catalog: .standard, in: transaction
                ).results
                // What the event loop sends when the batch's rows cannot be built.
                guard let postgres = transaction as? PostgresTransaction else {
                    throw StoreError(.database, "not a PostgreSQL transaction")
                }
                try postgres.send(PostgresTransaction.abortTransaction)
                return results
            }
        }
        #expect(failure?.outcomeUnknown == false, "\(String(describing: failure))")
        #expect(failure?.message.contains("rolled back") == true, "\(String(describing: failure))")
        #expect(try await contract.store.lastSequence() == last)
        #expect(try await contract.store.counts().values.reduce(0, +) == 0)
        _ = try await contract.must(.submit(Contract.submission(), idempotencyKey: "aborted", book: false))
        #expect(try await contract.store.lastSequence() == last + 2)
    }
}
