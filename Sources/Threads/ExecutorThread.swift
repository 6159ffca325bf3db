import Dispatch
import Foundation

/// A thread of its own that runs the jobs of the tasks that prefer it (a `TaskExecutor`).
///
/// A store whose client blocks (SQLite) runs its writes here, off the cooperative pool, whose
/// threads (one per core) it must not hold; a caller that runs its own loop here too (the
/// daemon's store loop, through the store's executor) then reaches the store without a
/// thread hop per transaction.
public final class ExecutorThread: TaskExecutor, Sendable {
    private let jobs = JobQueue<UnownedJob>()
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name` (`Thread(named:body:)`), and returns once it runs
    /// under that name.
    public init(name: String) {
        let named = DispatchSemaphore(value: 0)
        let thread = Thread(named: name) { [self] in
            named.signal()
            while let taken = jobs.take() {
                for job in taken { job.runSynchronously(on: asUnownedTaskExecutor()) }
            }
            finished.signal()
        }
        thread.start()
        named.wait()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // The thread has ended (the store closed under a late caller): the job goes to the
        // cooperative pool rather than nowhere, which would leave its task waiting for good.
        if !jobs.push(job) { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Ends the thread once the jobs enqueued so far have run; with `wait`, waits for that
    /// (never from the thread itself).
    public func stop(wait: Bool = true) {
        jobs.stop()
        if wait { finished.wait() }
    }
}
