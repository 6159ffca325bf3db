import Dispatch
import Synchronization

/// Runs `body` to completion from synchronous code, blocking the calling thread.
///
/// `quoted-bench`'s `main` stays synchronous (`ParsableCommand`, not `AsyncParsableCommand`):
/// valgrind cannot run Swift's async `main`, and instruction counts under callgrind are what
/// `quoted-bench engine` is for.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await body())
        } catch {
            outcome = .failure(error)
        }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
