import QuoteDaemon
import Testing

@Suite("systemd notifications")
struct SystemdNotifierTests {
    // Time limits guard against hangs only. They count from the test's start, and an async
    // test waits for a thread of the cooperative pool (two here) while the end-to-end tests'
    // blocking waits hold them: a whole run takes about two minutes, so three.
    @Test(
        "a long start-up step asks systemd again and again to wait three intervals more",
        .timeLimit(.minutes(3)))
    func startTimeoutIsExtended() throws {
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        // The step itself waits until three extensions have arrived: it outlasts several
        // intervals by construction, not by sleeping.
        let received = notifier.extendingStartTimeout(every: .milliseconds(20), status: "migrating") {
            var messages: [String] = []
            while messages.count < 3, let message = listener.next() { messages.append(message) }
            return messages
        }
        #expect(received == Array(repeating: "EXTEND_TIMEOUT_USEC=60000\nSTATUS=migrating", count: 3))
    }

    @Test("a notification never waits for a receiver that does not read", .timeLimit(.minutes(3)))
    func neverBlocks() throws {
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
        // Far more than a datagram socket's queue holds: past it they are dropped, not waited on.
        for _ in 0..<10_000 { notifier.notify("WATCHDOG=1") }
        #expect(listener.next() == "WATCHDOG=1")
    }

    @Test("without NOTIFY_SOCKET the step just runs")
    func withoutSystemd() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(notifier.extendingStartTimeout(status: "migrating") { 42 } == 42)
    }
}
