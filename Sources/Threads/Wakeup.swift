import Synchronization

/// A wake-up call for one async loop: ``signal()`` from any thread, ``wait()`` from the loop.
/// A signal sent while the loop is busy is kept, so that its next `wait` returns at once;
/// several such signals count as one. With `wakesOnCancel`, cancelling the waiting task wakes
/// it too (for a loop that ends on cancellation; one that ends otherwise would spin).
public final class Wakeup: Sendable {
    private struct State {
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let wakesOnCancel: Bool

    /// A wake-up call, woken by cancellation too if `wakesOnCancel`.
    public init(wakesOnCancel: Bool) {
        self.wakesOnCancel = wakesOnCancel
    }

    /// Wakes the loop, now if it waits, else at its next ``wait()``.
    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once signalled since the last return, or (with `wakesOnCancel`) once the task
    /// is cancelled.
    public func wait() async {
        let wakesOnCancel = wakesOnCancel
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.signalled || (wakesOnCancel && Task.isCancelled) {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            if wakesOnCancel { signal() }
        }
    }
}
