import Glibc
import Testing
import ZeroMQ

@testable import QuoteDaemon

/// The connection limits, fed the monitor events of real loopback TCP connections: each
/// accepted from a client bound to its own source address (`127.0.0.1`, `127.0.0.2`...).
@Suite("The connection limits")
struct ConnectionCountTests {
    /// A listening socket on `127.0.0.1`, and the connections accepted from it.
    final class Listener {
        let descriptor: Int32
        let port: UInt16
        private var opened: [Int32] = []

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.address("127.0.0.1", port: 0)
            let bound = Self.withSockaddr(&address) { bind(descriptor, $0, $1) }
            try #require(bound == 0)
            try #require(listen(descriptor, 64) == 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = Self.withSockaddr(&address) { pointer, _ in getsockname(descriptor, pointer, &length) }
            self.descriptor = descriptor
            port = UInt16(bigEndian: address.sin_port)
            opened.append(descriptor)
        }

        deinit { for descriptor in opened { close(descriptor) } }

        /// Connects from `source` and returns the descriptor quoted's side would hold.
        func accept(from source: String) throws -> UInt32 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            opened.append(client)
            var local = Self.address(source, port: 0)
            try #require(Self.withSockaddr(&local) { bind(client, $0, $1) } == 0)
            var remote = Self.address("127.0.0.1", port: port)
            try #require(Self.withSockaddr(&remote) { connect(client, $0, $1) } == 0)
            let accepted = Glibc.accept(descriptor, nil, nil)
            try #require(accepted >= 0)
            opened.append(accepted)
            return UInt32(bitPattern: accepted)
        }

        private static func address(_ host: String, port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            return address
        }

        private static func withSockaddr<T>(
            _ address: inout sockaddr_in, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> T
        ) -> T {
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    private static func event(_ kind: MonitorEvents, _ descriptor: UInt32) throws -> MonitorEvent {
        let head: [UInt8] = [
            UInt8(kind.rawValue & 0xFF), UInt8(kind.rawValue >> 8),
            UInt8(descriptor & 0xFF), UInt8(descriptor >> 8 & 0xFF), UInt8(descriptor >> 16 & 0xFF),
            UInt8(descriptor >> 24),
        ]
        return try #require(MonitorEvent(frames: [head, Array("tcp://127.0.0.1:1".utf8)]))
    }

    @Test("connections from one address past its limit neither count further nor lock other addresses out")
    func oneAddressCannotFillTheCount() throws {
        let listener = try Listener()
        var count = ConnectionCount(limit: 4, perAddressLimit: 2)
        var flood: [UInt32] = []
        for _ in 0..<10 {
            let descriptor = try listener.accept(from: "127.0.0.2")
            flood.append(descriptor)
            count.record(try Self.event(.accepted, descriptor), on: .commands)
        }
        #expect(count.open == 10)
        #expect(count.counted == 2)
        #expect(count.exceeded(from: "127.0.0.2") == .perAddress)
        let listed = try listener.accept(from: "127.0.0.1")
        count.record(try Self.event(.accepted, listed), on: .commands)
        #expect(count.exceeded(from: "127.0.0.1") == nil)

        // The flood goes: the address may connect again.
        for descriptor in flood { count.record(try Self.event(.disconnected, descriptor), on: .commands) }
        #expect(count.open == 1)
        #expect(count.counted == 1)
        #expect(count.exceeded(from: "127.0.0.2") == nil)
    }

    @Test("past the total, every address is refused, until connections close")
    func total() throws {
        let listener = try Listener()
        var count = ConnectionCount(limit: 3, perAddressLimit: 2)
        var descriptors: [UInt32] = []
        for source in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
            let descriptor = try listener.accept(from: source)
            descriptors.append(descriptor)
            count.record(try Self.event(.accepted, descriptor), on: .events)
        }
        #expect(count.exceeded(from: "127.0.0.9") == .total)
        count.record(try Self.event(.disconnected, descriptors[0]), on: .events)
        #expect(count.exceeded(from: "127.0.0.9") == nil)
        // Unbinding the events socket takes all of its connections out.
        count.eventsUnbound()
        #expect(count.open == 0)
        #expect(count.counted == 0)
    }

    @Test("a disconnection never seen accepted, or seen twice, changes nothing")
    func unbalancedEvents() throws {
        let listener = try Listener()
        var count = ConnectionCount(limit: 8, perAddressLimit: 8)
        let descriptor = try listener.accept(from: "127.0.0.2")
        count.record(try Self.event(.disconnected, descriptor), on: .commands)
        #expect(count.counted == 0)
        count.record(try Self.event(.accepted, descriptor), on: .commands)
        // Accepted on the other socket too: each socket's descriptors are their own.
        count.record(try Self.event(.accepted, descriptor), on: .events)
        count.record(try Self.event(.disconnected, descriptor), on: .commands)
        count.record(try Self.event(.disconnected, descriptor), on: .commands)
        #expect(count.open == 1)
        #expect(count.counted == 1)
    }

    @Test(
        "addresses are grouped: an IPv4 host, an IPv6 /64, a link-local or translated IPv4 host",
        arguments: [
            ("10.0.0.1", "10.0.0.1", true), ("10.0.0.1", "10.0.0.2", false),
            ("2001:db8::1", "2001:db8::ffff:1", true), ("2001:db8::1", "2001:db8:0:1::1", false),
            ("fe80::1%eth0", "fe80::1", true), ("fe80::1", "fe80::2", false), ("::ffff:10.0.0.1", "10.0.0.1", true),
            ("64:ff9b::10.0.0.1", "64:ff9b::10.0.0.2", false),
        ])
    func grouping(first: String, second: String, same: Bool) throws {
        let a = try #require(PeerAddress(zapAddress: first))
        let b = try #require(PeerAddress(zapAddress: second))
        #expect((a == b) == same)
    }

    @Test("a descriptor's peer reads as the address libzmq gives ZAP: IPv6, and IPv4 on a dual-stack listener")
    func descriptorsMatchZAPAddresses() throws {
        let listener = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var no: Int32 = 0
        setsockopt(listener, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &no, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 8) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin6_port)
        for (family, host, zap) in [(AF_INET6, "::1", "::1"), (AF_INET, "127.0.0.1", "127.0.0.1")] {
            let client = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(client) }
            let connected: Bool
            if family == AF_INET6 {
                var remote = sockaddr_in6()
                remote.sin6_family = sa_family_t(AF_INET6)
                remote.sin6_port = port.bigEndian
                inet_pton(AF_INET6, host, &remote.sin6_addr)
                connected = withUnsafePointer(to: &remote) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(client, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0
                    }
                }
            } else {
                var remote = sockaddr_in()
                remote.sin_family = sa_family_t(AF_INET)
                remote.sin_port = port.bigEndian
                inet_pton(AF_INET, host, &remote.sin_addr)
                connected = withUnsafePointer(to: &remote) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
            }
            try #require(connected, "\(host)")
            let accepted = accept(listener, nil, nil)
            try #require(accepted >= 0)
            defer { close(accepted) }
            let peer = try #require(PeerAddress(descriptor: accepted), "\(host)")
            #expect(peer == PeerAddress(zapAddress: zap), "\(host)")
            if family == AF_INET { #expect(peer == PeerAddress(zapAddress: "::ffff:\(host)")) }
        }
    }

    @Test("the events listener's close takes out every connection it accepted, even those read after the unbind")
    func listenerClosed() throws {
        let listener = try Listener()
        var count = ConnectionCount(limit: 8, perAddressLimit: 8)
        count.record(try Self.event(.accepted, try listener.accept(from: "127.0.0.2")), on: .events)
        count.record(try Self.event(.accepted, try listener.accept(from: "127.0.0.2")), on: .commands)
        count.eventsUnbound()
        count.record(try Self.event(.accepted, try listener.accept(from: "127.0.0.3")), on: .events)
        #expect(count.counted == 2)
        count.record(try Self.event(.closed, 0), on: .events)
        #expect(count.open == 1)
        #expect(count.counted == 1)
        #expect(count.exceeded(from: "127.0.0.3") == nil)
    }

    @Test("text that is no IP address names no peer")
    func notAnAddress() {
        #expect(PeerAddress(zapAddress: "") == nil)
        #expect(PeerAddress(zapAddress: ":1000:1000:42") == nil)
        #expect(PeerAddress(descriptor: -1) == nil)
    }
}
