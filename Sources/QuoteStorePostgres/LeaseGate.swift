import QuoteStore
import Synchronization

/// One wait for a connection of the pool (``PostgresQuoteStore``'s `withConnection`): answered
/// once, by the body's result, the lease's failure or the deadline, whichever comes first; the
/// body runs only if nobody has given up on it yet. A lease that comes after the answer is
/// handed back unused.
final class LeaseGate<T: Sendable, Connection: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Result<T, StoreError>, Never>
    private enum State {
        case idle
        case waiting(Waiter)
        case running(Waiter, Connection, since: ContinuousClock.Instant)
        case done
    }
    /// Where a wait stands, for its deadline.
    enum Phase {
        case waiting
        case running(Connection, since: ContinuousClock.Instant)
        case done
    }
    private let state = Mutex(State.idle)

    func open(_ continuation: Waiter) {
        state.withLock { $0 = .waiting(continuation) }
    }

    var phase: Phase {
        state.withLock { state in
            switch state {
            case .idle, .waiting: .waiting
            case .running(_, let connection, let since): .running(connection, since: since)
            case .done: .done
            }
        }
    }

    /// Whether the body may run on `connection`: nobody gave up on it yet.
    func start(on connection: Connection) -> Bool {
        state.withLock { state in
            guard case .waiting(let continuation) = state else { return false }
            state = .running(continuation, connection, since: .now)
            return true
        }
    }

    func finish(_ result: Result<T, StoreError>) {
        let continuation = take()
        continuation?.resume(returning: result)
    }

    /// Answers with `error` unless answered already; whether it was.
    func abandon(_ error: StoreError) -> Bool {
        let continuation = take()
        continuation?.resume(returning: .failure(error))
        return continuation != nil
    }

    private func take() -> Waiter? {
        state.withLock { state -> Waiter? in
            switch state {
            case .waiting(let continuation), .running(let continuation, _, _):
                state = .done
                return continuation
            case .idle, .done:
                return nil
            }
        }
    }
}
