import Foundation
import Logging
import PostgresNIO
import QuoteCore
import QuoteStore
import QuoteStoreCodec
import Synchronization

extension PostgresQuoteStore {
    /// Runs `body` on a connection of the pool. While none comes, the server is checked every
    /// second: one that refuses connections (down, restarting) fails the request at once, so
    /// that it gets its `storage_error` promptly instead of waiting for the server to come back;
    /// one that accepts them (busy, or out of sessions) is waited for up to
    /// ``Configuration/acquireTimeout``. The pool reconnects by itself meanwhile. Once leased,
    /// `body` may run for ``Configuration/transactionTimeout`` (or `unlimited`, for migrations).
    func withConnection<T: Sendable>(
        unlimited: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        // Once the server is known down, check it at once.
        let firstCheck: Duration = reachable.load(ordering: .relaxed) ? .seconds(1) : .zero
        guard let pool = primary.pool else { throw StoreError(.unavailable, "PostgreSQL: the store is closed") }
        let (host, port, limit, running) = (pool.host.name, pool.host.port, acquireTimeout, transactionTimeout)
        let client = pool.client
        // The lease is never cancelled (the pool does not always give up a lease cancelled
        // while it cannot connect, nor the connection of one cancelled as it is handed over):
        // the caller stops waiting for it at the deadline, and a connection leased after
        // that is handed back unused.
        let gate = LeaseGate<T, PostgresConnection>()
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
                    case .running(let connection, let since):
                        // A statement on a connection lost mid-transaction is not always
                        // answered: the transaction has failed, and the caller hears so.
                        // Lost or cut off during a COMMIT, it may have committed: unknown.
                        if connection.isClosed {
                            _ = gate.abandon(
                                StoreError(
                                    .unavailable, "PostgreSQL: the connection was lost; the outcome is unknown",
                                    outcomeUnknown: true))
                            return
                        }
                        // A call that outlives its limit, typically a commit waiting for a
                        // synchronous standby that is down: its outcome is unknown, so it is
                        // refused, and its connection is closed rather than handed back.
                        guard !unlimited, since.duration(to: .now) >= running else { continue }
                        let abandoned = gate.abandon(
                            StoreError(
                                .unavailable,
                                "PostgreSQL: no answer within \(running) (is a synchronous standby down?);"
                                    + " the outcome is unknown and was not acknowledged", outcomeUnknown: true))
                        if abandoned {
                            try? await connection.close()
                            Self.endAbandonedSessions(on: client, after: running, logger: logger)
                        }
                        return
                    case .waiting:
                        break
                    }
                    if await !ServerProbe.probe(host: host, port: port) {
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
            primary.reached(pool)
            if !reachable.exchange(true, ordering: .relaxed) {
                logger.notice("PostgreSQL reachable again")
            }
            return value
        case .failure(let error):
            if error.code == .unavailable { primary.lost(pool) }
            if error.code == .unavailable, reachable.exchange(false, ordering: .relaxed) {
                logger.error(
                    "PostgreSQL unreachable: requests get storage_error until it is back",
                    metadata: ["error": "\(error.message)"])
            }
            throw error
        }
    }

    /// The server keeps a session whose client closed its connection while it waited for a
    /// synchronous standby (its commit is made locally, and it waits until the standby comes
    /// back), one more each time a commit is given up on, until its connections run out. So
    /// `timeout` (the transaction timeout) after one is given up on, quoted's sessions that
    /// have waited for a standby longer than that, given up on by every daemon with the same
    /// timeout, are ended.
    static func endAbandonedSessions(on client: PostgresClient, after timeout: Duration, logger: Logger) {
        Task {
            try? await Task.sleep(for: timeout)
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) * 1e-18
            do {
                let ended = try await client.withConnection { connection in
                    try await connection.query(
                        """
                        SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                        WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()
                            AND application_name = \(applicationName) AND wait_event = 'SyncRep'
                            AND query_start < now() - make_interval(secs => \(seconds))
                        """, logger: logger
                    ).collect().first?.decode(Int64.self) ?? 0
                }
                if ended > 0 {
                    logger.notice(
                        "ended sessions left waiting for a synchronous standby", metadata: ["sessions": "\(ended)"])
                }
            } catch {
                logger.warning(
                    "cannot end sessions left waiting for a synchronous standby", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The `application_name` of quoted's sessions, which ``endAbandonedSessions(on:after:logger:)``
    /// looks for.
    static let applicationName = "quoted"

    func query(_ build: @autoclosure () throws -> PostgresQuery) async throws(StoreError) -> [PostgresRow] {
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

    /// Rolls back the transaction `error` ended, unless the connection is closed: the server
    /// rolls it back then, and a statement sent on a lost connection may never be answered.
    /// A live connection is rolled back whatever the error, even one that says the server
    /// cannot serve (a standby's 25006): otherwise it would go back to the pool inside a
    /// failed transaction.
    static func rollback(_ connection: PostgresConnection, after error: StoreError) async {
        guard !connection.isClosed else { return }
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

    /// Whether `error` says the connection was lost: the server's answer never came.
    static func isConnectionLoss(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        let lost: Set<PSQLError.Code> = [
            .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown,
        ]
        return lost.contains(error.code)
    }

    /// `error` as a `StoreError`, with the server's message when it sent one.
    static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            let state = error.serverInfo?[.sqlState] ?? "-"
            // The connection lost, or the server shutting down or starting (SQLSTATE 57P...).
            // A standby refuses writes (25006, read-only transaction; 25P02 follows it in the same
            // transaction): the host is no longer the primary, and another may be.
            let unavailable = isConnectionLoss(error) || state.hasPrefix("57P") || state == "25006"
            // A deadlock or a serialization failure: the transaction was rolled back, and may
            // be run again.
            let conflict = state == "40P01" || state == "40001"
            return StoreError(
                unavailable ? .unavailable : conflict ? .busy : .database, "PostgreSQL: \(message) (SQLSTATE \(state))")
        }
        return StoreError(.database, "PostgreSQL: \(error)")
    }
}
