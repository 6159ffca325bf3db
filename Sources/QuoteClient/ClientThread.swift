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

    /// Runs `body` with the client, on the thread, and returns what it returned. A caller
    /// cancelled while its job waits its turn is answered ``QuotedError/Code/cancelled`` at
    /// once, and the job is skipped; a job already running runs to its end.
    func run<T: Sendable>(_ body: @escaping @Sendable (borrowing CommandClient) throws(QuotedError) -> T)
        async throws(QuotedError) -> T
    {
        let call = PendingCall<T>()
        let result: Result<T, QuotedError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard call.arm(continuation) else { return }
                let accepted =
                    !closed.load(ordering: .acquiring)
                    && jobs.push { client in
                        guard call.start() else { return }
                        do throws(QuotedError) {
                            call.finish(.success(try body(client)))
                        } catch {
                            call.finish(.failure(error))
                        }
                    }
                if !accepted { call.finish(.failure(QuotedError(.usage, "the client is closed"))) }
            }
        } onCancel: {
            call.cancel()
        }
        return try result.get()
    }

    /// Ends the thread after the jobs queued so far; its socket and context close with it.
    func stop() {
        closed.store(true, ordering: .releasing)
        jobs.stop()
    }
}

/// One caller's job and its continuation, resumed exactly once: by the job when it ends, or
/// by the caller's cancellation while the job has not started.
private final class PendingCall<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<T, QuotedError>, Never>?
        var started = false
        var cancelled = false
    }

    private let state = Mutex(State())
    private static var cancellation: QuotedError {
        QuotedError(.cancelled, "cancelled while waiting for the requests before it; not sent")
    }

    /// Keeps `continuation` for the job; `false` (and it is resumed) when already cancelled.
    func arm(_ continuation: CheckedContinuation<Result<T, QuotedError>, Never>) -> Bool {
        let cancelled = state.withLock { state in
            if !state.cancelled { state.continuation = continuation }
            return state.cancelled
        }
        if cancelled { continuation.resume(returning: .failure(Self.cancellation)) }
        return !cancelled
    }

    /// Whether the job may run: not when its caller was cancelled first.
    func start() -> Bool {
        state.withLock { state in
            state.started = !state.cancelled
            return state.started
        }
    }

    /// Answers the caller with what the job came to.
    func finish(_ result: Result<T, QuotedError>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }

    /// The caller was cancelled: answered at once unless its job has started.
    func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<Result<T, QuotedError>, Never>? in
            state.cancelled = true
            guard !state.started else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: .failure(Self.cancellation))
    }
}
