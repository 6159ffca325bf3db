import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStorePostgres
import QuoteStoreSQLite
import Synchronization
import TestSupport
import Testing

/// One kind of store under the contract: how to make a fresh, empty database for a test, and
/// handles on it. Every store implementation joins ``all``; each contract test runs once per
/// entry.
struct StoreFactory: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable () throws -> any StoreDatabase

    var testDescription: String { name }

    /// Every store that must keep the contract.
    static let all: [StoreFactory] = [.sqlite, .postgres]

    /// The embedded SQLite store, on a file in a fresh directory.
    static let sqlite = StoreFactory(name: "SQLite") { try SQLiteDatabase() }

    /// The PostgreSQL store, on a fresh database of the process's throwaway cluster.
    static let postgres = StoreFactory(name: "PostgreSQL") { try PostgresDatabase() }
}

/// A fresh database for one test, removed when the value goes away.
protocol StoreDatabase: Sendable {
    /// A new handle on the database (a connection of its own, as another process would have),
    /// its catalog synced to `catalog`, dating its changes by `clock`, keeping events as
    /// `retention` says.
    func open(catalog: Catalog, clock: TestClock, retention: EventRetention) async throws -> any QuoteStore

    /// Marks the database migrated by `migration`, as a later quoted would have.
    func record(migration: String) throws
}

final class SQLiteDatabase: StoreDatabase {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func open(catalog: Catalog, clock: TestClock, retention: EventRetention) async throws -> any QuoteStore {
        var configuration = SQLiteQuoteStore.Configuration()
        configuration.retention = retention
        return try SQLiteQuoteStore(
            path: directory + "/quoted.sqlite", catalog: catalog, configuration: configuration,
            logger: Logger(label: "test.contract"), clock: { clock.now })
    }

    func record(migration: String) throws {
        try DatabaseQueue(path: directory + "/quoted.sqlite").write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration])
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

final class PostgresDatabase: StoreDatabase {
    let url: String

    /// What runs the stores' pools: one service for the test process, as the daemon has one.
    private static let pools: PostgresPools = {
        let pools = PostgresPools()
        Task { await pools.run() }
        return pools
    }()
    private var pools: PostgresPools { Self.pools }

    init() throws {
        url = try PostgresCluster.start().createDatabase()
    }

    func record(migration: String) throws {
        let name = String(url.split(separator: "/").last ?? "")
        _ = try PostgresCluster.start().sql(
            "INSERT INTO quoted_migrations (id) VALUES ('\(migration.replacingOccurrences(of: "'", with: "''"))')",
            database: name)
    }

    func open(catalog: Catalog, clock: TestClock, retention: EventRetention) async throws -> any QuoteStore {
        var configuration = try PostgresQuoteStore.Configuration(url: url)
        configuration.retention = retention
        return try await PostgresQuoteStore.open(
            configuration: configuration, catalog: catalog, pools: pools, logger: Logger(label: "test.contract"),
            clock: { clock.now })
    }
}

/// A clock the test moves by hand, in whole milliseconds (what every store keeps).
final class TestClock: Sendable {
    private let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { date.withLock { $0 } }

    func advance(seconds: Double) {
        date.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// A store under test with its catalog and clock, applying commands through the rules as the
/// daemon does.
struct Contract {
    let database: any StoreDatabase
    let store: any QuoteStore
    let catalog: Catalog
    let clock: TestClock
    let rules = Rulebook()

    init(_ factory: StoreFactory, catalog: Catalog = .standard, retention: EventRetention = .init()) async throws {
        database = try factory.make()
        clock = TestClock()
        store = try await database.open(catalog: catalog, clock: clock, retention: retention)
        self.catalog = catalog
    }

    /// Another handle on the same database.
    func another() async throws -> any QuoteStore {
        try await database.open(catalog: catalog, clock: clock, retention: .init())
    }

    func apply(_ commands: [QuoteCommand], on store: (any QuoteStore)? = nil) async throws(StoreError)
        -> [Result<CommandOutcome, QuoteError>]
    {
        try await rules.apply(commands, catalog: catalog, to: store ?? self.store, at: clock.now)
    }

    /// Applies one command that must succeed.
    @discardableResult
    func must(_ command: QuoteCommand) async throws -> CommandOutcome {
        try await apply([command])[0].get()
    }

    /// A valid submission for `services`, naming `mechanic` as the customer's preference.
    static func submission(
        _ services: [String] = ["Oil Change"], mechanic: String? = nil, name: String = "Reza",
        email: String = "reza@example.com"
    ) -> Submission {
        Submission(
            customer: .init(name: name, email: email, address: "1 Main St"),
            car: .init(make: "Honda", model: "Civic", year: 2015, trim: "EX"), services: services, mechanic: mechanic)
    }

    /// Submits and books, returning the mechanic the store chose.
    func book(_ services: [String] = ["Oil Change"], mechanic: String? = nil) async throws -> (QuoteID, Mechanic?) {
        let outcome = try await must(
            .submit(Self.submission(services, mechanic: mechanic), idempotencyKey: nil, book: true))
        return (try outcome.changedQuote.id, try outcome.changedQuote.mechanic)
    }

    /// Every event in the log.
    func log() async throws -> [StoredEvent] {
        try await store.events(after: 0, limit: 1_000_000)
    }
}
