import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP listener on loopback that answers one connection with a ZMTP 3.0 greeting for
/// CURVE, as a quoted with security does, and then waits for the peer to hang up. A client
/// without keys finds the mechanisms differ and drops the connection for good: libzmq does not
/// reconnect after a protocol error.
///
/// Its port is below the kernel's range for outgoing connections' ports, where nothing binds
/// by itself: a test's next server takes the same port once this one has gone, and a port in
/// that range could meanwhile become a connection's own end (another test's, or the
/// reconnecting client's to itself).
final class MismatchedServer: Sendable {
    /// Where it listens: `tcp://127.0.0.1:PORT`.
    let endpoint: String
    private let listener: Int32
    private let hungUp = DispatchSemaphore(value: 0)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var reuse: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let below = Self.firstEphemeralPort()
        var listening = false
        for _ in 0..<100 where !listening {
            address.sin_port = UInt16(Int.random(in: 10_000..<below)).bigEndian
            listening = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 1) == 0
                }
            }
            if !listening && errno != EADDRINUSE { break }
        }
        guard listening else {
            let error = errno
            close(fd)
            throw POSIXError(.init(rawValue: error) ?? .EIO)
        }
        listener = fd
        endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        Thread.detachNewThread { [hungUp] in
            let peer = accept(fd, nil, nil)
            guard peer >= 0 else { return }
            // Signature, version 3.0, mechanism "CURVE", as-server, filler: 64 bytes.
            var greeting: [UInt8] = [0xFF] + [UInt8](repeating: 0, count: 8) + [0x7F, 3, 0]
            greeting += Array("CURVE".utf8) + [UInt8](repeating: 0, count: 15)
            greeting += [1] + [UInt8](repeating: 0, count: 31)
            _ = greeting.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var buffer = [UInt8](repeating: 0, count: 256)
            while buffer.withUnsafeMutableBytes({ recv(peer, $0.baseAddress, $0.count, 0) }) > 0 {}
            // Closed before it is told: a server that takes the port next must find it free.
            close(peer)
            hungUp.signal()
        }
    }

    /// Waits until the client has closed the connection, and this side too; `false` after
    /// `timeout`.
    func waitForHangUp(timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        return hungUp.wait(timeout: .now() + .milliseconds(Int(seconds * 1_000 + attoseconds / 1_000_000_000_000_000)))
            == .success
    }

    /// The lowest port the kernel gives outgoing connections (`ip_local_port_range`).
    private static func firstEphemeralPort() -> Int {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
        return max(low, 10_001)
    }

    deinit { close(listener) }
}
