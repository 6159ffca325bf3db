public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Every child the tests start, and every pipe they give one, goes through here, one at a time.
///
/// Foundation's `Process.run()` on Linux closes in the child the descriptors that were open
/// when it looked, and keeps in the child one end of a socket pair whose closing tells the
/// parent that the child has exited. A descriptor another thread opens meanwhile is inherited
/// by the child: another child's end of its socket pair, or a pipe's, then lives as long as
/// this child. Inherited by a long-lived process (the PostgreSQL server lives until the tests
/// end), it leaves the other child's `isRunning` true, or a pipe's reader waiting for its end,
/// for good: the whole run hangs.
private let spawning = Mutex(())

/// Runs `body`, which starts a child by other means than `Process` (`posix_spawn`), with no
/// other child started, nor pipe made, meanwhile.
public func withSpawnLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    try spawning.withLock { _ throws(E) in try body() }
}

/// Signalled when each child started by `spawn()` exits, until its exit is waited for.
private let exits = Mutex<[ObjectIdentifier: DispatchSemaphore]>([:])

extension Process {
    /// `run()`, with no other child started, nor pipe made, meanwhile. Its exit can then be
    /// waited for with a deadline (``waitUntilExit(within:)``).
    public func spawn() throws {
        let exited = DispatchSemaphore(value: 0)
        let key = ObjectIdentifier(self)
        exits.withLock { $0[key] = exited }
        terminationHandler = { _ in exited.signal() }
        do {
            try spawning.withLock { _ in try run() }
        } catch {
            exits.withLock { $0[key] = nil }
            throw error
        }
    }

    /// What is signalled when this child, started by `spawn()`, exits; `nil` for another.
    func exitSignal() -> DispatchSemaphore? {
        exits.withLock { $0[ObjectIdentifier(self)] }
    }

    /// Forgets the exit signal of this child, once its exit was seen.
    func forgetExitSignal() {
        exits.withLock { $0[ObjectIdentifier(self)] = nil }
    }
}

extension Pipe {
    /// A pipe that no child inherits but the one it is given to: both ends close on `exec`,
    /// set before any other child can start.
    public static func forChild() -> Pipe {
        spawning.withLock { _ in
            let pipe = Pipe()
            for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            }
            return pipe
        }
    }
}
