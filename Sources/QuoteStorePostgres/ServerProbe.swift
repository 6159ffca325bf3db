import Foundation
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a server accepts TCP connections at all: what tells "PostgreSQL is down" (refused,
/// unreachable) from "PostgreSQL is busy" (accepted, slow to hand out a session) while a
/// request waits for a connection of the pool.
enum ServerProbe {
    /// ``accepts(host:port:timeout:)`` on a thread of its own: name resolution has no time
    /// limit and the connection may wait its whole `timeout`, which must never hold a thread
    /// of the cooperative pool (one a core).
    static func probe(host: String, port: Int, timeout: Duration = .seconds(1)) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread(named: "quoted-pg-probe") {
                continuation.resume(returning: accepts(host: host, port: port, timeout: timeout))
            }.start()
        }
    }

    /// Tries to connect to `host`:`port`, for at most `timeout`; closes the connection at once.
    static func accepts(host: String, port: Int, timeout: Duration = .seconds(1)) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return false }
        defer { freeaddrinfo(found) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            if connects(address.pointee, timeout: timeout) { return true }
            entry = address.pointee.ai_next
        }
        return false
    }

    private static func connects(_ address: addrinfo, timeout: Duration) -> Bool {
        let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue), address.ai_protocol)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var poll = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard Glibc.poll(&poll, 1, milliseconds) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return false }
        return error == 0
    }
}
