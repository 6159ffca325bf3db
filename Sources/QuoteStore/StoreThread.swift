import Dispatch
import Foundation
import Synchronization

/// A thread of its own that runs the jobs of the tasks that prefer it (a `TaskExecutor`).
///
/// A store whose client blocks (SQLite) runs its writes here, off the cooperative pool, whose
/// threads (one per core) it must not hold; a caller that runs its own loop here too (the
/// daemon's store loop, through ``QuoteStore/executor``) then reaches the store without a
/// thread hop per transaction.
public final class StoreThread: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`.
    public init(name: String) {
        let thread = Thread { [self] in work() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        available.signal()
    }

    private func work() {
        defer { finished.signal() }
        while true {
            available.wait()
            let (jobs, stop) = queue.withLock { queue in
                defer { queue.jobs = [] }
                return (queue.jobs, queue.stopping)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if stop && jobs.isEmpty { return }
        }
    }

    /// Ends the thread once the jobs enqueued so far have run; with `wait`, waits for that
    /// (never from the thread itself).
    public func stop(wait: Bool = true) {
        queue.withLock { $0.stopping = true }
        available.signal()
        if wait { finished.wait() }
    }
}
