import Dispatch
import Synchronization

/// Runs async code to completion on the calling thread: how the store's rules, which are
/// async so that an async database client fits them, run inside a GRDB write, whose closure
/// is synchronous and whose connection must not leave its thread.
///
/// The task starts at once on this thread (`Task.immediate`) and, against SQLite, never
/// suspends; should it, its continuations are jobs on this executor, run here too, so that
/// nothing of it ever runs elsewhere. Used by one thread at a time (the store's writer).
final class InlineExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let available = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// What `body` returns or throws, run on this thread.
    ///
    /// `body` need not be `Sendable`, nor what it captures (a connection bound to this thread):
    /// the task runs only here, while this call waits for it.
    func run<T, Failure: Error>(_ body: @escaping () async throws(Failure) -> T) throws(Failure) -> T {
        let outcome = Outcome<T, Failure>(body)
        _ = Task.immediate(executorPreference: self) {
            let result: Result<T, Failure>
            do throws(Failure) {
                result = .success(try await outcome.body())
            } catch {
                result = .failure(error)
            }
            outcome.result = result
        }
        while true {
            if let result = outcome.result { return try result.get() }
            available.wait()
            let ready = jobs.withLock { jobs in
                defer { jobs = [] }
                return jobs
            }
            for job in ready { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// The task's work, and where it leaves its result for the thread that waits for it.
    private final class Outcome<T, Failure: Error>: @unchecked Sendable {
        // Unchecked: used on one thread only, the caller of `run`, which runs every job of
        // the task itself.
        let body: () async throws(Failure) -> T
        var result: Result<T, Failure>?

        init(_ body: @escaping () async throws(Failure) -> T) { self.body = body }
    }
}
