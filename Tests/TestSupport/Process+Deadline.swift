public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Process {
    /// Waits until the process has exited, for at most `limit`. One still running then is
    /// killed (SIGKILL), waited for ten seconds more, and the answer is `false`: a child that
    /// never exits fails its test instead of hanging the whole run. Read `terminationStatus`
    /// only once `isRunning` is false.
    @discardableResult
    public func waitUntilExit(within limit: Duration) -> Bool {
        if waitForExit(until: .now + limit) { return true }
        kill(processIdentifier, SIGKILL)
        _ = waitForExit(until: .now + .seconds(10))
        return false
    }

    private func waitForExit(until deadline: ContinuousClock.Instant) -> Bool {
        // Foundation reaps its children itself; `isRunning` turns false once it has.
        while isRunning, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        guard !isRunning else { return false }
        waitUntilExit()
        return true
    }
}
