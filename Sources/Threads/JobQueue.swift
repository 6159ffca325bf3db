import Dispatch
import Synchronization

/// The jobs for one thread: pushed from any thread, run on that one, one at a time, in the
/// order they came. What an ``ExecutorThread`` runs a task's jobs through, and the client
/// library its socket's.
public final class JobQueue<Job: Sendable>: Sendable {
    private struct State {
        var jobs: [Job] = []
        var stopping = false
        var finished = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)

    /// An empty queue.
    public init() {}

    /// Adds `job` for ``take()``; `false` (and the job is not run) once ``take()`` has
    /// returned `nil`.
    @discardableResult
    public func push(_ job: Job) -> Bool {
        let accepted = state.withLock { state in
            guard !state.finished else { return false }
            state.jobs.append(job)
            return true
        }
        if accepted { available.signal() }
        return accepted
    }

    /// Lets ``take()`` return `nil` once every job pushed so far, and any pushed while they
    /// run, has been taken.
    public func stop() {
        state.withLock { $0.stopping = true }
        available.signal()
    }

    /// The jobs pushed since the last call, waiting for one if there is none; `nil` once
    /// ``stop()`` was called and no job is left. For the queue's one thread: `while let jobs =
    /// queue.take() { for job in jobs { ... } }`.
    public func take() -> [Job]? {
        while true {
            available.wait()
            let jobs = state.withLock { state -> [Job]? in
                guard !state.jobs.isEmpty else {
                    if state.stopping { state.finished = true }
                    return state.finished ? nil : []
                }
                defer { state.jobs = [] }
                return state.jobs
            }
            guard let jobs else { return nil }
            if !jobs.isEmpty { return jobs }
        }
    }
}
