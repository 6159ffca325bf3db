#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a connection comes from, as the per-address connection limit groups peers: an IPv4
/// address, or the /64 network of an IPv6 one (one host is commonly given a whole /64, so
/// counting its addresses one by one would count nothing). A link-local IPv6 address, and
/// an IPv4 one translated into IPv6 (`64:ff9b::/96`), are one host each: every host of a
/// link shares the link-local /64, and a translator puts all of IPv4 in one.
///
/// It is read two ways that must agree: from an accepted connection's descriptor (the socket
/// monitors report it), and from the `address` of a ZAP request, which libzmq writes from the
/// same descriptor as a numeric host.
struct PeerAddress: Hashable {
    /// IPv6 form: an IPv4 address as `::ffff:a.b.c.d`, an IPv6 one with its last 64 bits zero.
    private let high: UInt64
    private let low: UInt64

    private init(bytes: UnsafeRawBufferPointer) {
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // An IPv4 address, mapped or translated, and a link-local address are one host each;
        // any other IPv6 address counts as its /64.
        let mapped = high == 0 && low >> 32 == 0xFFFF
        let translated = high == 0x0064_FF9B_0000_0000 && low >> 32 == 0
        let linkLocal = high >> 54 == 0xFE80 >> 6
        self.high = high
        self.low = mapped || translated || linkLocal ? low : 0
    }

    private init(ipv4 network: UInt32) {
        high = 0
        low = 0xFFFF << 32 | UInt64(UInt32(bigEndian: network))
    }

    /// The peer of the connected socket `descriptor`; `nil` when it is no IP connection
    /// (`ipc://`), or is already closed.
    init?(descriptor: Int32) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard found == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            }
            self.init(ipv4: address)
        case AF_INET6:
            let address = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            }
            self = withUnsafeBytes(of: address) { PeerAddress(bytes: $0) }
        default:
            return nil
        }
    }

    /// The address a ZAP request names (`1.2.3.4`, `2001:db8::1`, `fe80::1%eth0`); `nil` for
    /// any other text.
    init?(zapAddress text: String) {
        // A link-local address may carry its interface, which is not compared.
        let host =
            text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        var ipv4 = in_addr()
        if inet_pton(AF_INET, host, &ipv4) == 1 {
            self.init(ipv4: ipv4.s_addr)
            return
        }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, host, &ipv6) == 1 else { return nil }
        self = withUnsafeBytes(of: ipv6) { PeerAddress(bytes: $0) }
    }
}
