import Foundation
import Logging
import PostgresNIO
import QuoteStore
import Synchronization

/// The connection pool on the primary among the store's hosts.
///
/// With one host, the pool on it, which reconnects by itself. With several (a primary and its
/// standbys), the host that accepts writes is found at start, and found again whenever a request
/// finds the pool's host gone (refusing connections) or read-only (demoted): the hosts are asked
/// in order whether they are in recovery (`pg_is_in_recovery()`), and the first that is not gets
/// a new pool. Until one is found, requests get `storage_error` at once; a search runs at most
/// once at a time, and again at most every 250 ms while requests keep failing.
///
/// Nothing is ever written to a standby: it refuses writes itself (SQLSTATE 25006), and that
/// refusal is what starts a search.
final class PostgresPrimary: Sendable {
    /// A pool on one host.
    struct Pool: Sendable {
        let client: PostgresClient
        let host: PostgresHost
        /// Counts the pools made, to tell a loss on this pool from one on a pool already replaced.
        let generation: Int
    }

    /// What the store reports of its losses of the primary.
    struct Availability: Sendable {
        /// Times the pool moved to another host.
        var failovers = 0
        /// Seconds without a primary, over every loss ended so far.
        var downSeconds: Double = 0
    }

    private struct State {
        var pool: Pool
        var running: PostgresPools.Running
        var searching = false
        var lastSearch: ContinuousClock.Instant?
        /// Since when no primary has answered; `nil` while one does.
        var downSince: ContinuousClock.Instant?
        var availability = Availability()
        /// Whether this loss's first fruitless search was logged (the next ones are not).
        var warned = false
        var closed = false
    }

    private let state: Mutex<State>
    private let configuration: PostgresQuoteStore.Configuration
    private let pools: PostgresPools
    private let logger: Logger
    /// Called once the pool is on a new primary, before requests use it.
    private let onFailover: @Sendable () -> Void

    /// A pool on the first host that is a primary, or on the first host when there is only
    /// one; throws `unavailable` when none of several is.
    static func connect(
        configuration: PostgresQuoteStore.Configuration, pools: PostgresPools, logger: Logger,
        onFailover: @escaping @Sendable () -> Void
    ) async throws(StoreError) -> PostgresPrimary {
        let hosts = configuration.hosts
        let found: (Pool, PostgresPools.Running)?
        if hosts.count > 1 {
            found = await Self.findPrimary(generation: 1, configuration: configuration, pools: pools, logger: logger)
        } else {
            found = await Self.startPool(
                on: hosts[0], generation: 1, configuration: configuration, pools: pools, logger: logger)
        }
        guard let (pool, running) = found else {
            throw StoreError(
                .unavailable, "PostgreSQL: none of \(hosts.map(\.description).joined(separator: ", ")) accepts writes")
        }
        return PostgresPrimary(
            pool: pool, running: running, configuration: configuration, pools: pools, logger: logger,
            onFailover: onFailover)
    }

    private init(
        pool: Pool, running: PostgresPools.Running, configuration: PostgresQuoteStore.Configuration,
        pools: PostgresPools, logger: Logger, onFailover: @escaping @Sendable () -> Void
    ) {
        state = Mutex(State(pool: pool, running: running))
        self.configuration = configuration
        self.pools = pools
        self.logger = logger
        self.onFailover = onFailover
    }

    /// The pool requests use now; `nil` once the store is closed.
    var pool: Pool? { state.withLock { $0.closed ? nil : $0.pool } }

    var availability: Availability {
        state.withLock { state in
            var availability = state.availability
            if let since = state.downSince { availability.downSeconds += Self.seconds(since.duration(to: .now)) }
            return availability
        }
    }

    /// A request on `pool` succeeded: a loss, if one was under way, has ended.
    func reached(_ pool: Pool) {
        let ended: Duration? = state.withLock { state in
            guard pool.generation == state.pool.generation, let since = state.downSince else { return nil }
            state.downSince = nil
            state.warned = false
            let down = since.duration(to: .now)
            state.availability.downSeconds += Self.seconds(down)
            return down
        }
        if let ended { logger.notice("PostgreSQL primary reachable again", metadata: ["down": "\(ended)"]) }
    }

    /// A request on `pool` found its host gone or read-only: with several hosts, look for the
    /// primary again (unless a search is under way, or ran in the last 250 ms).
    func lost(_ pool: Pool) {
        let search: Bool = state.withLock { state in
            guard !state.closed, pool.generation == state.pool.generation else { return false }
            if state.downSince == nil { state.downSince = .now }
            guard configuration.hosts.count > 1, !state.searching else { return false }
            if let last = state.lastSearch, last.duration(to: .now) < .milliseconds(250) { return false }
            state.searching = true
            state.lastSearch = .now
            return true
        }
        guard search else { return }
        Task { await self.search(replacing: pool) }
    }

    /// Ends the pool; the store cannot be used after.
    func close() {
        let running = state.withLock { state in
            state.closed = true
            return state.running
        }
        running.retire()
    }

    deinit {
        state.withLock { $0.running }.retire()
    }

    private func search(replacing old: Pool) async {
        let found = await Self.findPrimary(
            generation: old.generation + 1, skipping: old.host, configuration: configuration, pools: pools,
            logger: logger)
        guard let (pool, running) = found else {
            let first = state.withLock { state in
                defer {
                    state.searching = false
                    state.warned = true
                }
                return !state.warned
            }
            if first {
                logger.warning(
                    "PostgreSQL: no other host accepts writes yet; requests get storage_error until one does")
            }
            return
        }
        onFailover()
        let replaced: PostgresPools.Running = state.withLock { state in
            state.searching = false
            guard !state.closed, state.pool.generation == old.generation else { return running }
            let previous = state.running
            state.pool = pool
            state.running = running
            state.availability.failovers += 1
            return previous
        }
        replaced.retire()
        logger.notice(
            "PostgreSQL: failed over to the new primary",
            metadata: ["from": "\(old.host)", "to": "\(pool.host)"])
    }

    /// A pool on the first host, in the URL's order, that accepts connections and is not in
    /// recovery, other than `skipping`: the host of the pool in use, which reconnects by itself
    /// if that host comes back. Each host is asked through a pool of its own, kept if it is the
    /// primary.
    private static func findPrimary(
        generation: Int, skipping lost: PostgresHost? = nil, configuration: PostgresQuoteStore.Configuration,
        pools: PostgresPools, logger: Logger
    ) async -> (Pool, PostgresPools.Running)? {
        for host in configuration.hosts where host != lost {
            guard await ServerProbe.probe(host: host.name, port: host.port) else { continue }
            guard
                let (pool, running) = await startPool(
                    on: host, generation: generation, configuration: configuration, pools: pools, logger: logger)
            else { return nil }
            do {
                let inRecovery = try await pool.client.withConnection { connection in
                    let rows = try await connection.query("SELECT pg_is_in_recovery()", logger: logger)
                    for try await value in rows.decode(Bool.self) { return value }
                    return true
                }
                if !inRecovery { return (pool, running) }
            } catch {
                logger.debug("PostgreSQL host not usable", metadata: ["host": "\(host)", "error": "\(error)"])
            }
            running.retire()
        }
        return nil
    }

    /// A pool on `host`, run by `pools`; `nil` when `pools` has stopped (the process is
    /// shutting down).
    private static func startPool(
        on host: PostgresHost, generation: Int, configuration: PostgresQuoteStore.Configuration,
        pools: PostgresPools, logger: Logger
    ) async -> (Pool, PostgresPools.Running)? {
        let client = PostgresClient(configuration: configuration.client(on: host), backgroundLogger: logger)
        guard let running = await pools.start(client) else { return nil }
        return (Pool(client: client, host: host, generation: generation), running)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
