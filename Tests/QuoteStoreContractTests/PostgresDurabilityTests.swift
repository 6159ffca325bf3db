import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

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
}
