public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Waits until the process has exited, for at most `limit`. One still running then is
    /// killed (SIGKILL) and reaped, and the answer is `false`: a child that never exits fails
    /// its test instead of hanging the whole run.
    @discardableResult
    public func waitUntilExit(within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        // Foundation reaps its children itself; `isRunning` turns false once it has.
        while isRunning, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        guard isRunning else {
            waitUntilExit()
            return true
        }
        kill(processIdentifier, SIGKILL)
        waitUntilExit()
        return false
    }
}
