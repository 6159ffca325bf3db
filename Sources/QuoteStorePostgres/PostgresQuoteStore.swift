public import Foundation
public import Logging
import PostgresNIO
public import QuoteCore
public import QuoteStore
import QuoteStoreCodec
import Synchronization

/// The PostgreSQL store: the same rules and contract as the embedded SQLite store, on a server
/// that several quoted daemons share. Each write is one transaction on a pooled connection
/// (``PostgresTransaction``); reads go to any connection of the pool.
///
/// Its connection pool (`PostgresClient`) runs in the ``PostgresPools`` service it is opened
/// with, from ``open(configuration:catalog:pools:logger:clock:)`` until ``close()``. Opening migrates the schema under an advisory lock (the first daemon to
/// start applies what is pending; the others wait for it) and syncs the catalog.
public final class PostgresQuoteStore: QuoteStore {
    /// The pool, on the primary among the URL's hosts.
    let primary: PostgresPrimary
    /// The currency of the latest catalog version this store has seen, recorded with each
    /// new quote; an older version read late never takes it back.
    let currency: Mutex<(version: Int64, currency: Currency)>
    let retention: EventRetention
    let clock: @Sendable () -> Date
    let quoteIDs: QuoteIDBlocks
    /// This store's name in the notifications of its commits.
    let instance = UUID().uuidString
    let acquireTimeout: Duration
    let transactionTimeout: Duration
    /// Whether commits must be confirmed by a synchronous standby, as the server last said.
    let replication = ReplicationRequirement()
    /// Whether the last attempt to reach the server succeeded.
    let reachable = Atomic<Bool>(true)
    let logger: Logger

    private init(
        primary: PostgresPrimary, quoteIDs: QuoteIDBlocks, currency: Currency, retention: EventRetention,
        acquireTimeout: Duration,
        transactionTimeout: Duration, clock: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.primary = primary
        self.quoteIDs = quoteIDs
        self.acquireTimeout = acquireTimeout
        self.transactionTimeout = transactionTimeout
        self.currency = Mutex((0, currency))
        self.retention = retention
        self.clock = clock
        self.logger = logger
    }

    /// Connects to the database `configuration` names and migrates it; a database that holds
    /// no catalog yet is seeded with `catalog`. The catalog in force is the database's
    /// (``catalog()``). The changes of every write are dated by `clock`. `pools` runs the
    /// store's connection pool, and must be running (it is waited for).
    public static func open(
        configuration: Configuration, catalog: Catalog, pools: PostgresPools, logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws(StoreError) -> PostgresQuoteStore {
        let quoteIDs = QuoteIDBlocks()
        let primary = try await PostgresPrimary.connect(configuration: configuration, pools: pools, logger: logger) {
            quoteIDs.discard()
        }
        let store = PostgresQuoteStore(
            primary: primary, quoteIDs: quoteIDs, currency: catalog.currency, retention: configuration.retention,
            acquireTimeout: configuration.acquireTimeout, transactionTimeout: configuration.transactionTimeout,
            clock: clock, logger: logger)
        do {
            try await store.migrate()
            _ = try await store.seedCatalog(catalog)
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Makes `currency` the one recorded with new quotes, if `version` is not older than the
    /// version whose currency is.
    func advanceCurrency(to currency: Currency, version: Int64) {
        self.currency.withLock { inForce in
            if version >= inForce.version { inForce = (version, currency) }
        }
    }

    /// Closes the pool's connections; the store cannot be used after.
    public func close() {
        primary.close()
    }

    public var availability: StoreAvailability {
        let availability = primary.availability
        return StoreAvailability(failovers: availability.failovers, downSeconds: availability.downSeconds)
    }

    // MARK: Writing

    public func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T> {
        let now = clock()
        let currency = currency.withLock { $0.currency }
        let logger = logger
        let quoteIDs = quoteIDs
        let instance = instance
        let replication = replication
        return try await withConnection { connection throws(StoreError) in
            let transaction = PostgresTransaction(
                connection: connection, now: now, currency: currency, quoteIDs: quoteIDs, instance: instance,
                logger: logger)
            let value: T
            do throws(StoreError) {
                // Stated, not left to the server's default: the rules rely on each statement
                // seeing what committed before it (a row locked is read as last committed).
                try transaction.send("BEGIN ISOLATION LEVEL READ COMMITTED")
                value = try await body(transaction)
                try await transaction.finish()
                try await transaction.commit()
            } catch {
                // A transaction that may have committed (a connection lost during COMMIT) keeps
                // its quote ids: they are never handed out again.
                guard !error.outcomeUnknown else { throw error }
                await Self.rollback(connection, after: error)
                transaction.abandon()
                throw error
            }
            do throws(StoreError) {
                try await Self.confirmReplicated(connection, replication)
            } catch {
                // It committed on the primary.
                throw error.withUnknownOutcome
            }
            if let recorded = transaction.recordedCatalog {
                self.advanceCurrency(to: recorded.currency, version: recorded.version)
            }
            return Committed(value, sequenceOffset: transaction.sequenceOffset)
        }
    }
}
