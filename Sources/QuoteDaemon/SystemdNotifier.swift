public import Foundation
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Talks to systemd over `NOTIFY_SOCKET` (`sd_notify`'s datagram protocol, written here so
/// no libsystemd is needed): `READY=1`, `STATUS=...`, `STOPPING=1`, `WATCHDOG=1`.
///
/// Without `NOTIFY_SOCKET` (not under systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    private let path: String?
    /// The datagram socket every notification is sent on, opened once: a daemon out of file
    /// descriptors (a flood of connections) must still be able to tell the watchdog it lives.
    private let socket: NotifySocket?
    /// How often to send `WATCHDOG=1`: half of `WATCHDOG_USEC`, or `nil` when no watchdog is set.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socket = path == nil ? nil : NotifySocket()
        if let usec = environment["WATCHDOG_USEC"].flatMap(Int64.init), usec > 0,
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdogInterval = .microseconds(usec / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether a notify socket was given.
    public var isEnabled: Bool { path != nil }

    /// Runs `body` (a start-up step that may take long, such as opening a store that must
    /// migrate every row first) while telling systemd, every `interval`, to wait three
    /// intervals more for `READY=1` (`EXTEND_TIMEOUT_USEC`), with `status` as the unit's
    /// status. A migration of a large store outlasts the unit's `TimeoutStartSec`; killed,
    /// it would roll back and start over at every restart. Without systemd it just runs
    /// `body`.
    public func extendingStartTimeout<T>(
        every interval: Duration = .seconds(10), status: String, _ body: () throws -> T
    ) rethrows -> T {
        guard isEnabled else { return try body() }
        let finished = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        let microseconds = interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000
        let extend = "EXTEND_TIMEOUT_USEC=\(microseconds * 3)\nSTATUS=\(status)"
        let thread = Thread(named: "quoted-start") { [self] in
            notify(extend)
            while finished.wait(timeout: .now() + .microseconds(Int(microseconds))) == .timedOut {
                notify(extend)
            }
            stopped.signal()
        }
        thread.start()
        defer {
            finished.signal()
            stopped.wait()
        }
        return try body()
    }

    /// Sends `state` (newline-separated `KEY=value` lines); failures are ignored, as sd_notify does.
    public func notify(_ state: String) {
        guard let path else { return }
        // Opened at start; should that have failed, one more try now.
        let spare = socket?.descriptor == nil ? NotifySocket() : nil
        guard let fd = socket?.descriptor ?? spare?.descriptor else { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // An abstract socket is written with a leading '@' and addressed with a leading NUL.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let message = Array(state.utf8)
        // Never waits: the I/O loop sends these, and a datagram to a receiver whose queue is
        // full would block it (and the watchdog with it) until the receiver reads. Dropped
        // instead; the next turn sends again.
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes {
                    sendto(
                        fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), socketAddress, length)
                }
            }
        }
    }
}

/// A datagram socket of the notifier's own, closed with the last notifier that uses it.
private final class NotifySocket: Sendable {
    let descriptor: Int32?

    init() {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        descriptor = fd >= 0 ? fd : nil
    }

    deinit {
        if let descriptor { close(descriptor) }
    }
}
