import Foundation
import Synchronization
import Threads
import ZeroMQ

/// The one thread that owns a ``Quoted``'s ZeroMQ context and DEALER socket (a socket never
/// crosses threads): async calls queue jobs here and are resumed with what the job returned.
/// Jobs run one at a time, in order.
final class ClientThread: Sendable {
    typealias Job = @Sendable (borrowing CommandClient) -> Void

    private let jobs = JobQueue<Job>()
    /// Set by ``stop()``: no request goes out after it.
    private let closed = Atomic<Bool>(false)

    /// Starts the thread, which makes its client with `connect`; throws what that threw.
    init(name: String, connect: @escaping @Sendable (Context) throws(QuotedError) -> CommandClient) throws(QuotedError)
    {
        let started = DispatchSemaphore(value: 0)
        let failure = Mutex<QuotedError?>(nil)
        let thread = Thread(named: name) { [jobs] in
            let context: Context
            let client: CommandClient
            do {
                context = try Context()
            } catch {
                failure.withLock { $0 = QuotedError(.internal, "cannot start ZeroMQ: \(error)") }
                started.signal()
                return
            }
            do throws(QuotedError) {
                client = try connect(context)
            } catch {
                failure.withLock { $0 = error }
                started.signal()
                return
            }
            started.signal()
            while let taken = jobs.take() {
                for job in taken { job(client) }
            }
            _ = consume client
            _ = context
        }
        thread.start()
        started.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Runs `body` with the client, on the thread, and returns what it returned.
    func run<T: Sendable>(_ body: @escaping @Sendable (borrowing CommandClient) throws(QuotedError) -> T)
        async throws(QuotedError) -> T
    {
        let result: Result<T, QuotedError> = await withCheckedContinuation { continuation in
            let accepted =
                !closed.load(ordering: .acquiring)
                && jobs.push { client in
                    do throws(QuotedError) {
                        continuation.resume(returning: .success(try body(client)))
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                }
            if !accepted { continuation.resume(returning: .failure(QuotedError(.usage, "the client is closed"))) }
        }
        return try result.get()
    }

    /// Ends the thread after the jobs queued so far; its socket and context close with it.
    func stop() {
        closed.store(true, ordering: .releasing)
        jobs.stop()
    }
}
