import Foundation
import QuoteDaemon
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("systemd notifications")
struct SystemdNotifierTests {
    // Time limits guard against hangs only. They count from the test's start, and an async
    // test waits for a thread of the cooperative pool (two here) while the end-to-end tests'
    // blocking waits hold them: a whole run takes about two minutes, so three.
    @Test(
        "a long start-up step asks systemd again and again to wait three intervals more",
        .timeLimit(.minutes(3)))
    func startTimeoutIsExtended() throws {
        // systemd's side: an abstract datagram socket, as NOTIFY_SOCKET names them with '@'.
        let name = "quoted-test-\(UUID().uuidString)"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: [0] + Array(name.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.utf8.count))
            }
        }
        try #require(bound == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name])
        // The step itself waits until three extensions have arrived: it outlasts several
        // intervals by construction, not by sleeping.
        let received = notifier.extendingStartTimeout(every: .milliseconds(20), status: "migrating") {
            var messages: [String] = []
            var buffer = [UInt8](repeating: 0, count: 512)
            while messages.count < 3 {
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                messages.append(String(decoding: buffer.prefix(count), as: UTF8.self))
            }
            return messages
        }
        #expect(received == Array(repeating: "EXTEND_TIMEOUT_USEC=60000\nSTATUS=migrating", count: 3))
    }

    @Test("without NOTIFY_SOCKET the step just runs")
    func withoutSystemd() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(!notifier.isEnabled)
        #expect(notifier.extendingStartTimeout(status: "migrating") { 42 } == 42)
    }
}
