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
/// The store runs its connection pool (`PostgresClient`) itself, from ``open(configuration:catalog:logger:clock:)``
/// until ``close()``. Opening migrates the schema under an advisory lock (the first daemon to
/// start applies what is pending; the others wait for it) and syncs the catalog.
public final class PostgresQuoteStore: QuoteStore {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let currency: Mutex<Currency>
    private let retention: EventRetention
    private let clock: @Sendable () -> Date
    private let quoteIDs = QuoteIDBlocks()
    /// This store's name in the notifications of its commits.
    private let instance = UUID().uuidString
    private let acquireTimeout: Duration
    /// Where the server listens, for checking whether it accepts connections at all.
    private let server: (host: String, port: Int)
    /// Whether the last attempt to reach the server succeeded.
    private let reachable = Atomic<Bool>(true)
    let logger: Logger

    private init(
        client: PostgresClient, runner: Task<Void, Never>, currency: Currency, retention: EventRetention,
        acquireTimeout: Duration, server: (host: String, port: Int), clock: @escaping @Sendable () -> Date,
        logger: Logger
    ) {
        self.client = client
        self.acquireTimeout = acquireTimeout
        self.server = server
        self.runner = runner
        self.currency = Mutex(currency)
        self.retention = retention
        self.clock = clock
        self.logger = logger
    }

    /// Connects to the database `configuration` names, migrates it and syncs `catalog` into
    /// it; the changes of every write are dated by `clock`.
    public static func open(
        configuration: Configuration, catalog: Catalog, logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) async throws(StoreError) -> PostgresQuoteStore {
        let client = PostgresClient(configuration: configuration.client, backgroundLogger: logger)
        // A lease asked for before `run()` waits for it, with a warning in the log: the first
        // one waits until the runner is about to call it.
        let running = Atomic<Bool>(false)
        let runner = Task {
            running.store(true, ordering: .releasing)
            await client.run()
        }
        while !running.load(ordering: .acquiring) { await Task.yield() }
        await Task.yield()
        let store = PostgresQuoteStore(
            client: client, runner: runner, currency: catalog.currency, retention: configuration.retention,
            acquireTimeout: configuration.acquireTimeout, server: configuration.server, clock: clock, logger: logger)
        do {
            try await store.migrate()
            try await store.syncCatalog(catalog)
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Closes the pool's connections; the store cannot be used after.
    public func close() {
        runner.cancel()
    }

    deinit {
        runner.cancel()
    }

    // MARK: Writing

    public func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T> {
        let now = clock()
        let currency = currency.withLock { $0 }
        let logger = logger
        let quoteIDs = quoteIDs
        let instance = instance
        return try await withConnection { connection throws(StoreError) in
            try await Self.run(connection, "BEGIN")
            let transaction = PostgresTransaction(
                connection: connection, now: now, currency: currency, quoteIDs: quoteIDs, instance: instance,
                logger: logger)
            do throws(StoreError) {
                let value = try await body(transaction)
                try await transaction.finish()
                try await Self.run(connection, "COMMIT")
                return Committed(value, sequenceOffset: transaction.sequenceOffset)
            } catch {
                await Self.rollback(connection, after: error)
                transaction.abandon()
                throw error
            }
        }
    }

    /// Syncs `catalog` into the database under the catalog lock, so that daemons starting or
    /// reloading at once apply theirs one after the other, and records its fingerprint. When
    /// another daemon applied a different catalog, this one's replaces it, with a warning: the
    /// daemons still on the other price and dispatch differently until reloaded.
    public func syncCatalog(_ catalog: Catalog) async throws(StoreError) {
        // Running daemons lock mechanics' rows as they book: a sync that meets them in a
        // deadlock is rolled back by PostgreSQL, and runs again.
        var attempt = 1
        while true {
            do {
                return try await syncCatalogOnce(catalog)
            } catch  where error.code == .busy && attempt < 5 {
                logger.notice(
                    "catalog sync rolled back by a conflict with another daemon's transaction; again",
                    metadata: ["attempt": "\(attempt)", "error": "\(error.message)"])
                attempt += 1
                try? await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    private func syncCatalogOnce(_ catalog: Catalog) async throws(StoreError) {
        let fingerprint = catalog.fingerprint
        let logger = logger
        let previous = try await withConnection { connection throws(StoreError) -> (String, String)? in
            try await Self.run(connection, "BEGIN")
            do throws(StoreError) {
                // An arbitrary constant: quoted's catalog lock.
                try await Self.run(connection, "SELECT pg_advisory_xact_lock(7305173022)")
                let rows = try await Self.rows(
                    connection, "SELECT fingerprint, applied_by || ' at ' || applied_at::text FROM catalog_version")
                let previous = try rows.first.map { row throws(StoreError) in
                    try Self.decode(row, as: (String, String).self)
                }
                try await Self.sync(catalog, on: connection, logger: logger)
                try await Self.run(
                    connection,
                    """
                    INSERT INTO catalog_version (one, fingerprint, applied_by)
                    VALUES (TRUE, \(fingerprint), \(Self.processName))
                    ON CONFLICT (one) DO UPDATE SET fingerprint = excluded.fingerprint, applied_at = now(),
                        applied_by = excluded.applied_by
                    """)
                try await Self.run(connection, "COMMIT")
                return previous
            } catch {
                await Self.rollback(connection, after: error)
                throw error
            }
        }
        currency.withLock { $0 = catalog.currency }
        if let previous, previous.0 != fingerprint {
            logger.warning(
                "this catalog replaces another in the shared database: daemons still on the other one price and dispatch differently until they load this one",
                metadata: ["catalog": "\(fingerprint)", "replaced": "\(previous.0)", "replacedFrom": "\(previous.1)"])
        }
    }

    public func catalogFingerprint() async throws(StoreError) -> String? {
        let rows = try await query("SELECT fingerprint FROM catalog_version")
        return try rows.first.map { row throws(StoreError) in try Self.decode(row, as: String.self) }
    }

    /// Who applied a catalog, for the others' warnings: host and process id.
    private static let processName =
        "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier)"

    /// Upserts: another daemon's sync may have written the same rows just before.
    private static func sync(_ catalog: Catalog, on connection: PostgresConnection, logger: Logger)
        async throws(StoreError)
    {
        let serviceNames = catalog.services.map(\.name)
        try await run(connection, "DELETE FROM services WHERE NOT (name = ANY(\(serviceNames)))")
        for service in catalog.services {
            try await run(
                connection,
                """
                INSERT INTO services (name, minimum_skill, price_cents, currency)
                VALUES (\(service.name), \(service.minimumSkill.rawValue), \(service.price.cents),
                    \(service.price.currency.code))
                ON CONFLICT (name) DO UPDATE SET minimum_skill = excluded.minimum_skill,
                    price_cents = excluded.price_cents, currency = excluded.currency
                """)
        }
        let codes = catalog.coupons.map(\.code)
        try await run(connection, "DELETE FROM coupons WHERE NOT (code = ANY(\(codes)))")
        for coupon in catalog.coupons.map(StoredCoupon.init) {
            try await run(
                connection,
                """
                INSERT INTO coupons (code, percent_off, amount_off_cents, expires_at)
                VALUES (\(coupon.code), \(coupon.percentOff), \(coupon.amountOffCents), \(coupon.expiresAt))
                ON CONFLICT (code) DO UPDATE SET percent_off = excluded.percent_off,
                    amount_off_cents = excluded.amount_off_cents, expires_at = excluded.expires_at
                """)
        }
        let ids = catalog.mechanics.map(\.id.rawValue)
        try await run(connection, "UPDATE mechanics SET active = FALSE WHERE active AND NOT (id = ANY(\(ids)))")
        // The whole roster in one statement: a roster may hold 100,000. Only rows that differ
        // are written (an upsert locks every row it meets): an unchanged roster, as when a
        // daemon restarts, locks none of the rows running daemons book.
        let names = catalog.mechanics.map(\.name)
        let skills = catalog.mechanics.map(\.skill.rawValue)
        try await run(
            connection,
            """
            INSERT INTO mechanics (id, name, skill, active, quote_id, free_since)
            SELECT roster.id, roster.name, roster.skill, TRUE, NULL, 0
            FROM unnest(\(ids)::bigint[], \(names)::text[], \(skills)::int[]) AS roster(id, name, skill)
            LEFT JOIN mechanics current ON current.id = roster.id
            WHERE current.id IS NULL OR current.name <> roster.name OR current.skill <> roster.skill
                OR NOT current.active
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, skill = excluded.skill, active = TRUE
            """)
    }

    // MARK: Reading

    public func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord? {
        let rows = try await query("SELECT data, history FROM quotes WHERE id = \(id.rawValue)")
        guard let row = rows.first else { return nil }
        let (data, bytes) = try Self.decode(row, as: (Data, Data).self)
        let history: [StateChange]
        do {
            history = try HistoryCodec.decode(bytes)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
        return QuoteRecord(quote: try PostgresTransaction.quote(data), history: history)
    }

    public func quote(idempotencyKey key: String) async throws(StoreError) -> Quote? {
        let rows = try await query("SELECT data FROM quotes WHERE idempotency_key = \(key)")
        return try rows.first.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func quotes(status: QuoteStatus?, afterID: QuoteID?, limit: Int) async throws(StoreError) -> [Quote] {
        let after = afterID?.rawValue ?? 0
        let rows: [PostgresRow]
        if let status {
            rows = try await query(
                "SELECT data FROM quotes WHERE state = \(status.rawValue) AND id > \(after) ORDER BY id LIMIT \(limit)")
        } else {
            rows = try await query("SELECT data FROM quotes WHERE id > \(after) ORDER BY id LIMIT \(limit)")
        }
        return try rows.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote] {
        let rows = try await query(
            "SELECT data FROM quotes WHERE wait_seq IS NOT NULL ORDER BY wait_seq LIMIT \(limit)")
        return try rows.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func mechanics() async throws(StoreError) -> [MechanicState] {
        let rows = try await query(
            "SELECT id, name, skill, quote_id, free_since FROM mechanics WHERE active ORDER BY id")
        return try rows.map { row throws(StoreError) in
            let (id, name, skill, quote, freeSince) = try Self.decode(
                row, as: (Int64, String, Int, Int64?, Int64?).self)
            return MechanicState(
                mechanic: PostgresTransaction.mechanic((id, name, skill)), quote: quote.map(QuoteID.init),
                freeSince: freeSince.map(StoredTime.date))
        }
    }

    public func counts() async throws(StoreError) -> [QuoteStatus: Int] {
        var counts = Dictionary(uniqueKeysWithValues: QuoteStatus.allCases.map { ($0, 0) })
        for row in try await query("SELECT state, count(*) FROM quotes GROUP BY state") {
            let (state, count) = try Self.decode(row, as: (String, Int64).self)
            if let status = QuoteStatus(rawValue: state) { counts[status] = Int(count) }
        }
        return counts
    }

    public func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent] {
        let rows = try await query(
            """
            SELECT seq, at, type, quote_id, from_state, data, actor FROM events
            WHERE seq > \(after) ORDER BY seq LIMIT \(limit)
            """)
        return try rows.map { row throws(StoreError) in
            let (seq, at, type, quoteID, from, data, actor) = try Self.decode(
                row, as: (Int64, Int64, String, Int64, String?, Data, String?).self)
            let kind: StoredEvent.Kind
            do {
                kind = try StoredEvent.Kind(type: type, from: from, data: data, quote: QuoteID(quoteID))
            } catch {
                throw StoreError(.corrupt, "event \(seq): \(error)")
            }
            return StoredEvent(seq: seq, at: StoredTime.date(at), kind: kind, by: actor)
        }
    }

    public func lastSequence() async throws(StoreError) -> Int64 {
        let rows = try await query("SELECT last_seq FROM counters")
        return try rows.first.map { row throws(StoreError) in try Self.decode(row, as: Int64.self) } ?? 0
    }

    public func pruneEvents(now: Date) async throws(StoreError) -> Int {
        let cutoff = StoredTime.milliseconds(now) - retention.minimumAge.milliseconds
        let keep = Int64(retention.minimumCount)
        let rows = try await query(
            """
            DELETE FROM events WHERE seq <= (SELECT last_seq FROM counters) - \(keep) AND at < \(cutoff)
            RETURNING seq
            """)
        return rows.count
    }

    // MARK: Other daemons

    /// The channel every commit that appends events notifies (see ``PostgresTransaction``).
    static let appendsChannel = "quoted_events"

    public var isShared: Bool { true }

    /// Listens on ``appendsChannel`` with a connection of the pool, calling `hint` for each
    /// notification of another store's commit and once each time it starts listening (what
    /// was sent while it was not is lost); when the connection fails, it listens again a
    /// second later.
    public func watchAppends(_ hint: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.appendsChannel) { notifications in
                        hint()
                        for try await notification in notifications where notification.payload != instance {
                            hint()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("not listening for other daemons' events", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    // MARK: Integrity

    public func integrityViolations() async throws(StoreError) -> [IntegrityViolation] {
        var found: [IntegrityViolation] = []
        for row in try await query(
            """
            SELECT q.id, q.mechanic_id FROM quotes q LEFT JOIN mechanics m ON m.id = q.mechanic_id
            WHERE q.state = 'booked' AND (m.quote_id IS NULL OR m.quote_id != q.id)
            """)
        {
            let (quote, mechanic) = try Self.decode(row, as: (Int64, Int64?).self)
            found.append(.bookedWithoutMechanic(quote: quote, mechanic: mechanic))
        }
        for row in try await query(
            """
            SELECT m.id, m.quote_id FROM mechanics m LEFT JOIN quotes q ON q.id = m.quote_id
            WHERE m.quote_id IS NOT NULL AND (q.state IS DISTINCT FROM 'booked' OR q.mechanic_id IS DISTINCT FROM m.id)
            """)
        {
            let (mechanic, quote) = try Self.decode(row, as: (Int64, Int64).self)
            found.append(.heldWithoutBooking(mechanic: mechanic, quote: quote))
        }
        return found
    }

    // MARK: Connections

    /// Runs `body` on a connection of the pool. While none comes, the server is checked every
    /// second: one that refuses connections (down, restarting) fails the request at once, so
    /// that it gets its `storage_error` promptly instead of waiting for the server to come back;
    /// one that accepts them (busy, or out of sessions) is waited for up to
    /// ``Configuration/acquireTimeout``. The pool reconnects by itself meanwhile.
    func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        // Once the server is known down, check it at once.
        let firstCheck: Duration = reachable.load(ordering: .relaxed) ? .seconds(1) : .zero
        let (host, port, limit) = (server.host, server.port, acquireTimeout)
        let client = client
        // The lease is never cancelled (the pool does not always give up a lease cancelled
        // while it cannot connect, nor the connection of one cancelled as it is handed over):
        // the caller stops waiting for it at the deadline, and a connection leased after
        // that is handed back unused.
        let gate = LeaseGate<T>()
        let watch = Mutex<Task<Void, Never>?>(nil)
        defer { watch.withLock { $0 }?.cancel() }
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            gate.open(continuation)
            Task {
                do {
                    try await client.withConnection { connection in
                        guard gate.start(on: connection) else { return }
                        do throws(StoreError) {
                            gate.finish(.success(try await body(connection)))
                        } catch {
                            gate.finish(.failure(error))
                        }
                    }
                } catch {
                    gate.finish(.failure(Self.storeError(error)))
                }
            }
            // The deadline's watch: ended as soon as there is an answer.
            let deadline = Task {
                var waited = Duration.zero
                var step = firstCheck
                while true {
                    try? await Task.sleep(for: step)
                    waited += step
                    step = .seconds(1)
                    let failure: StoreError
                    switch gate.phase {
                    case .done:
                        return
                    case .running(let connection):
                        // A statement on a connection lost mid-transaction is not always
                        // answered: the transaction has failed, and the caller hears so.
                        guard connection.isClosed else { continue }
                        _ = gate.abandon(StoreError(.unavailable, "PostgreSQL: the connection was lost"))
                        return
                    case .waiting:
                        break
                    }
                    if !ServerProbe.accepts(host: host, port: port) {
                        failure = StoreError(
                            .unavailable, "PostgreSQL at \(host):\(port) refuses connections (down or restarting)")
                    } else if waited >= limit {
                        failure = StoreError(.unavailable, "PostgreSQL: no connection within \(limit)")
                    } else {
                        continue
                    }
                    _ = gate.abandon(failure)
                    return
                }
            }
            watch.withLock { $0 = deadline }
        }
        switch result {
        case .success(let value):
            if !reachable.exchange(true, ordering: .relaxed) {
                logger.notice("PostgreSQL reachable again")
            }
            return value
        case .failure(let error):
            if error.code == .unavailable, reachable.exchange(false, ordering: .relaxed) {
                logger.error(
                    "PostgreSQL unreachable: requests get storage_error until it is back",
                    metadata: ["error": "\(error.message)"])
            }
            throw error
        }
    }

    private func query(_ build: @autoclosure () throws -> PostgresQuery) async throws(StoreError) -> [PostgresRow] {
        let query: PostgresQuery
        do {
            query = try build()
        } catch {
            throw Self.storeError(error)
        }
        let logger = logger
        return try await withConnection { connection throws(StoreError) in
            do {
                return try await connection.query(query, logger: logger).collect()
            } catch {
                throw Self.storeError(error)
            }
        }
    }

    /// Rolls back the transaction `error` ended, unless `error` was the connection's loss: the
    /// server rolls it back then, and a statement sent on a lost connection may never be
    /// answered.
    static func rollback(_ connection: PostgresConnection, after error: StoreError) async {
        guard error.code != .unavailable else { return }
        try? await run(connection, "ROLLBACK")
    }

    static func rows(_ connection: PostgresConnection, _ query: @autoclosure () throws -> PostgresQuery)
        async throws(StoreError) -> [PostgresRow]
    {
        do {
            return try await connection.query(try query(), logger: Logger(label: "quoted.postgres")).collect()
        } catch {
            throw storeError(error)
        }
    }

    static func run(_ connection: PostgresConnection, _ query: @autoclosure () throws -> PostgresQuery)
        async throws(StoreError)
    {
        _ = try await rows(connection, try query())
    }

    static func decode<each T: PostgresDecodable>(_ row: PostgresRow, as: (repeat each T).Type) throws(StoreError)
        -> (repeat each T)
    {
        do {
            return try row.decode((repeat each T).self)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
    }

    /// `error` as a `StoreError`, with the server's message when it sent one.
    static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            let state = error.serverInfo?[.sqlState] ?? "-"
            // The connection lost, or the server shutting down or starting (SQLSTATE 57P...).
            let lost: Set<PSQLError.Code> = [
                .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
            ]
            let unavailable = lost.contains(error.code) || state.hasPrefix("57P")
            // A deadlock or a serialization failure: the transaction was rolled back, and may
            // be run again.
            let conflict = state == "40P01" || state == "40001"
            return StoreError(
                unavailable ? .unavailable : conflict ? .busy : .database, "PostgreSQL: \(message) (SQLSTATE \(state))")
        }
        return StoreError(.database, "PostgreSQL: \(error)")
    }

    /// One wait for a connection: answered once, by the body's result, the lease's failure
    /// or the deadline, whichever comes first; the body runs only if the deadline has not
    /// passed.
    private final class LeaseGate<T: Sendable>: Sendable {
        typealias Waiter = CheckedContinuation<Result<T, StoreError>, Never>
        private enum State {
            case idle
            case waiting(Waiter)
            case running(Waiter, PostgresConnection)
            case done
        }
        /// Where a wait stands, for its deadline.
        enum Phase {
            case waiting
            case running(PostgresConnection)
            case done
        }
        private let state = Mutex(State.idle)

        func open(_ continuation: Waiter) {
            state.withLock { $0 = .waiting(continuation) }
        }

        var phase: Phase {
            state.withLock { state in
                switch state {
                case .idle, .waiting: .waiting
                case .running(_, let connection): .running(connection)
                case .done: .done
                }
            }
        }

        /// Whether the body may run on `connection`: nobody gave up on it yet.
        func start(on connection: PostgresConnection) -> Bool {
            state.withLock { state in
                guard case .waiting(let continuation) = state else { return false }
                state = .running(continuation, connection)
                return true
            }
        }

        func finish(_ result: Result<T, StoreError>) {
            let continuation = take()
            continuation?.resume(returning: result)
        }

        /// Answers with `error` unless answered already; whether it was.
        func abandon(_ error: StoreError) -> Bool {
            let continuation = take()
            continuation?.resume(returning: .failure(error))
            return continuation != nil
        }

        private func take() -> Waiter? {
            state.withLock { state -> Waiter? in
                switch state {
                case .waiting(let continuation), .running(let continuation, _):
                    state = .done
                    return continuation
                case .idle, .done:
                    return nil
                }
            }
        }
    }

}
