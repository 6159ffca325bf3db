import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's side of `NOTIFY_SOCKET`: an abstract datagram socket, as systemd names them
/// with '@', that a test reads the daemon's notifications from.
final class NotifyListener {
    /// The value for `NOTIFY_SOCKET`.
    let address: String
    private let descriptor: Int32

    /// A socket of a fresh name whose reads give up after `timeout` seconds.
    init(timeout: Int = 10) throws {
        let name = "quoted-test-\(UUID().uuidString)"
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: [0] + Array(name.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.utf8.count))
            }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        self.address = "@" + name
    }

    deinit { close(descriptor) }

    /// The next notification; `nil` once none came within the timeout.
    func next() -> String? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    /// The notifications up to and including the first for which `matches` holds; `nil` if
    /// none did among the next `limit`, or before one read timed out.
    func read(until matches: (String) -> Bool, limit: Int = 1_000) -> [String]? {
        var seen: [String] = []
        while seen.count < limit, let message = next() {
            seen.append(message)
            if matches(message) { return seen }
        }
        return nil
    }
}
