public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Waits until the process, started by ``spawn()``, has exited, for at most `limit`. One
    /// still running then is killed (SIGKILL), waited for ten seconds more, and the answer is
    /// `false`: a child that never exits fails its test instead of hanging the whole run. Read
    /// `terminationStatus` only once `isRunning` is false.
    @discardableResult
    public func waitUntilExit(within limit: Duration) -> Bool {
        if waitForExit(limit) { return true }
        kill(processIdentifier, SIGKILL)
        _ = waitForExit(.seconds(10))
        return false
    }

    /// Waits for the exit `spawn()` watches for (its termination handler), then for
    /// Foundation to have reaped the child.
    private func waitForExit(_ limit: Duration) -> Bool {
        guard isRunning else {
            forgetExitSignal()
            return true
        }
        guard let exited = exitSignal() else { return false }
        let nanoseconds = limit.components.seconds * 1_000_000_000 + limit.components.attoseconds / 1_000_000_000
        guard exited.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return false }
        // The handler runs once Foundation has the exit status: this returns at once.
        waitUntilExit()
        forgetExitSignal()
        return true
    }
}
