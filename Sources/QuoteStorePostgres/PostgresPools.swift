import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// Runs the connection pools (`PostgresClient`s) of the PostgreSQL stores opened with it, as
/// one `Service` of the process's service group: each pool runs as a child task of ``run()``,
/// from the moment its store makes it until the store replaces it (a failover to another
/// host) or closes, or the service ends.
///
/// A store opened with it can be used only while ``run()`` runs: opening waits until its pool
/// does. On graceful shutdown, every pool is ended; the service group shuts this service down
/// after the services that use the store, so their last transactions have their connections.
public final class PostgresPools: Service, Sendable {
    /// A pool that runs: ``retire()`` ends it.
    struct Running: Sendable {
        fileprivate let id: Int
        fileprivate let pools: PostgresPools

        /// Ends the pool: its connections close, and its requests fail.
        func retire() { pools.retire(id) }
    }

    /// One pool to run, with what ends it and what tells its starter it runs.
    private struct Job: Sendable {
        let id: Int
        let client: PostgresClient
        let retired: AsyncStream<Void>
        let started: AsyncStream<Void>.Continuation
    }

    private struct State {
        var nextID = 0
        var stopped = false
        /// The pools started and not yet retired: what ends each, and what tells its starter.
        var live: [Int: (retire: AsyncStream<Void>.Continuation, started: AsyncStream<Void>.Continuation)] = [:]
    }

    private let jobs: AsyncStream<Job>
    private let submit: AsyncStream<Job>.Continuation
    private let state = Mutex(State())

    /// A runner with no pool yet.
    public init() {
        (jobs, submit) = AsyncStream.makeStream()
    }

    /// Runs every pool started, until graceful shutdown or cancellation ends them all. Call it
    /// once.
    public func run() async {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await job in jobs {
                    group.addTask { await Self.run(job) }
                }
                // Cancelled: end the pools that run, and any still to start.
                stop()
            }
        } onGracefulShutdown: {
            self.stop()
        }
    }

    /// Runs `client` as a child of ``run()``, and returns once it runs; `nil` when this service
    /// has ended (or ends first), and the pool never runs.
    func start(_ client: PostgresClient) async -> Running? {
        let (retired, retire) = AsyncStream.makeStream(of: Void.self)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let id: Int? = state.withLock { state in
            guard !state.stopped else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.live[id] = (retire, startedContinuation)
            return id
        }
        guard let id else { return nil }
        submit.yield(Job(id: id, client: client, retired: retired, started: startedContinuation))
        var running = false
        for await _ in started {
            running = true
            break
        }
        guard running else {
            // This service ended, or the caller was cancelled: the pool must not run on.
            self.retire(id)
            return nil
        }
        // The child calls `run()` next; a lease asked for before it would log a warning.
        await Task.yield()
        return Running(id: id, pools: self)
    }

    private func retire(_ id: Int) {
        let ended = state.withLock { $0.live.removeValue(forKey: id) }
        ended?.retire.finish()
        ended?.started.finish()
    }

    /// Ends every pool and takes no more.
    private func stop() {
        let ended = state.withLock { state in
            state.stopped = true
            defer { state.live = [:] }
            return Array(state.live.values)
        }
        submit.finish()
        for pool in ended {
            pool.retire.finish()
            pool.started.finish()
        }
    }

    /// Runs the pool until it is retired or the task is cancelled.
    private static func run(_ job: Job) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                job.started.yield()
                job.started.finish()
                await job.client.run()
            }
            group.addTask {
                for await _ in job.retired {}
            }
            await group.next()
            group.cancelAll()
        }
    }
}
