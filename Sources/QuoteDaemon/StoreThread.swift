import Foundation
import Synchronization

/// A thread of its own that runs the jobs of the tasks that prefer it (a `TaskExecutor`): the
/// store loop runs here, so that it never waits for, nor is starved by, the cooperative pool,
/// whose threads (one per core) callers may block.
final class StoreThread: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let available = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`.
    init(name: String) {
        let thread = Thread { [self] in work() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
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

    /// Ends the thread once the jobs enqueued so far have run, and waits for it.
    func stop() {
        queue.withLock { $0.stopping = true }
        available.signal()
        finished.wait()
    }
}
