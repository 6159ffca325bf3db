internal import CZeroMQ

/// A socket option whose value has the Swift type `Value`, so `set` and `get` are checked
/// by the compiler: `try socket.set(.linger, 0)`, `try socket.set(.subscribe, Array("quote.".utf8))`.
public struct SocketOption<Value: SocketOptionValue>: Sendable, CustomStringConvertible {
    let name: Int32
    /// The libzmq name of the option, for errors and logs.
    public let description: String

    init(_ name: Int32, _ description: String) {
        self.name = name
        self.description = description
    }
}

/// A Swift type that a socket option's value can have: integers, flags, bytes and text.
public protocol SocketOptionValue: Sendable {
    /// Calls `body` with the option's wire bytes.
    func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
    /// Reads the value back from the bytes libzmq wrote.
    init(optionBytes: UnsafeRawBufferPointer)
    /// The buffer size to offer libzmq when reading the option.
    static var optionCapacity: Int { get }
}

extension Int32: SocketOptionValue {
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: self) { body($0) }
    }
    public init(optionBytes: UnsafeRawBufferPointer) {
        self = optionBytes.loadUnaligned(as: Int32.self)
    }
    public static var optionCapacity: Int { MemoryLayout<Int32>.size }
}

extension Int64: SocketOptionValue {
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes(of: self) { body($0) }
    }
    public init(optionBytes: UnsafeRawBufferPointer) {
        self = optionBytes.loadUnaligned(as: Int64.self)
    }
    public static var optionCapacity: Int { MemoryLayout<Int64>.size }
}

extension Bool: SocketOptionValue {
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        Int32(self ? 1 : 0).withOptionBytes(body)
    }
    public init(optionBytes: UnsafeRawBufferPointer) {
        self = Int32(optionBytes: optionBytes) != 0
    }
    public static var optionCapacity: Int { MemoryLayout<Int32>.size }
}

extension Array: SocketOptionValue where Element == UInt8 {
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeBytes { body($0) }
    }
    public init(optionBytes: UnsafeRawBufferPointer) {
        self = Array(optionBytes)
    }
    public static var optionCapacity: Int { 256 }
}

extension String: SocketOptionValue {
    public func withOptionBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        Array(utf8).withOptionBytes(body)
    }
    public init(optionBytes: UnsafeRawBufferPointer) {
        // libzmq includes the terminating NUL in string options.
        var bytes = Array(optionBytes)
        while bytes.last == 0 { bytes.removeLast() }
        self = String(decoding: bytes, as: UTF8.self)
    }
    public static var optionCapacity: Int { 1024 }
}

extension Socket {
    /// Sets a socket option.
    public func set<Value>(_ option: SocketOption<Value>, _ value: Value) throws(ZeroMQError) {
        let rc = value.withOptionBytes { bytes in
            zmq_setsockopt(handle, option.name, bytes.baseAddress, bytes.count)
        }
        guard rc == 0 else { throw ZeroMQError.last("zmq_setsockopt(\(option))") }
    }

    /// Reads a socket option.
    public func get<Value>(_ option: SocketOption<Value>) throws(ZeroMQError) -> Value {
        var size = Value.optionCapacity
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        guard zmq_getsockopt(handle, option.name, buffer.baseAddress, &size) == 0 else {
            throw ZeroMQError.last("zmq_getsockopt(\(option))")
        }
        return Value(optionBytes: UnsafeRawBufferPointer(rebasing: buffer[0..<size]))
    }
}

extension SocketOption where Value == Int32 {
    /// How long, in milliseconds, unsent messages are kept after close (`-1` forever, `0` drop).
    public static var linger: Self { .init(ZMQ_LINGER, "ZMQ_LINGER") }
    /// The most outbound messages queued per peer before sends block or drop.
    public static var sendHighWaterMark: Self { .init(ZMQ_SNDHWM, "ZMQ_SNDHWM") }
    /// The most inbound messages queued per peer before the peer is pushed back.
    public static var receiveHighWaterMark: Self { .init(ZMQ_RCVHWM, "ZMQ_RCVHWM") }
    /// The kernel send buffer size in bytes (`-1`: the OS default).
    public static var sendBuffer: Self { .init(ZMQ_SNDBUF, "ZMQ_SNDBUF") }
    /// The kernel receive buffer size in bytes (`-1`: the OS default).
    public static var receiveBuffer: Self { .init(ZMQ_RCVBUF, "ZMQ_RCVBUF") }
    /// Milliseconds a blocking receive waits before it throws a timeout (`-1` forever).
    public static var receiveTimeout: Self { .init(ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO") }
    /// Milliseconds a blocking send waits before it throws a timeout (`-1` forever).
    public static var sendTimeout: Self { .init(ZMQ_SNDTIMEO, "ZMQ_SNDTIMEO") }
    /// Milliseconds between ZMTP heartbeat PINGs (0 disables heartbeats).
    public static var heartbeatInterval: Self { .init(ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL") }
    /// Milliseconds the remote peer should wait for traffic before it drops this connection.
    public static var heartbeatTTL: Self { .init(ZMQ_HEARTBEAT_TTL, "ZMQ_HEARTBEAT_TTL") }
    /// Milliseconds to wait for a PONG before the connection is considered dead.
    public static var heartbeatTimeout: Self { .init(ZMQ_HEARTBEAT_TIMEOUT, "ZMQ_HEARTBEAT_TIMEOUT") }
    /// Milliseconds before a dropped connection is retried.
    public static var reconnectInterval: Self { .init(ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL") }
    /// Milliseconds a new connection has to finish its ZMTP handshake (security included)
    /// before it is dropped (0: no limit).
    public static var handshakeInterval: Self { .init(ZMQ_HANDSHAKE_IVL, "ZMQ_HANDSHAKE_IVL") }
    /// The most pending connections a bound TCP socket accepts.
    public static var backlog: Self { .init(ZMQ_BACKLOG, "ZMQ_BACKLOG") }
    /// The file descriptor that signals this socket's readiness, for foreign event loops.
    public static var fileDescriptor: Self { .init(ZMQ_FD, "ZMQ_FD") }
}

extension SocketOption where Value == Int64 {
    /// The largest inbound message accepted; a peer sending a larger one is disconnected.
    public static var maxMessageSize: Self { .init(ZMQ_MAXMSGSIZE, "ZMQ_MAXMSGSIZE") }
}

extension SocketOption where Value == Bool {
    /// Queue messages only to completed connections, so nothing waits for absent peers.
    public static var immediate: Self { .init(ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE") }
    /// ROUTER: fail with ``ZeroMQError/Code/hostUnreachable`` instead of dropping silently.
    public static var routerMandatory: Self { .init(ZMQ_ROUTER_MANDATORY, "ZMQ_ROUTER_MANDATORY") }
    /// ROUTER: let a reconnecting peer take over its routing id.
    public static var routerHandover: Self { .init(ZMQ_ROUTER_HANDOVER, "ZMQ_ROUTER_HANDOVER") }
    /// XPUB: pass every subscription up, not only new ones.
    public static var xpubVerbose: Self { .init(ZMQ_XPUB_VERBOSE, "ZMQ_XPUB_VERBOSE") }
    /// Act as the CURVE server: requires ``SocketOption/curveSecretKey``.
    public static var curveServer: Self { .init(ZMQ_CURVE_SERVER, "ZMQ_CURVE_SERVER") }
    /// Accept IPv6 as well as IPv4 on TCP.
    public static var ipv6: Self { .init(ZMQ_IPV6, "ZMQ_IPV6") }
    /// Whether the frame last received has more frames after it.
    public static var receiveMore: Self { .init(ZMQ_RCVMORE, "ZMQ_RCVMORE") }
    /// Fail every handshake when no ZAP handler answers, rather than accept any client:
    /// without it libzmq 4.3 lets every CURVE client in when the handler is missing. A draft
    /// option in the headers (93), which Debian's libzmq 4.3.4 honours.
    public static var zapEnforceDomain: Self { .init(93, "ZMQ_ZAP_ENFORCE_DOMAIN") }
}

extension SocketOption where Value == [UInt8] {
    /// SUB: receive messages whose first frame starts with these bytes (empty: everything).
    public static var subscribe: Self { .init(ZMQ_SUBSCRIBE, "ZMQ_SUBSCRIBE") }
    /// SUB: undo one matching ``subscribe``.
    public static var unsubscribe: Self { .init(ZMQ_UNSUBSCRIBE, "ZMQ_UNSUBSCRIBE") }
    /// The identity a ROUTER peer sees for this socket (1 to 255 bytes, not starting with 0).
    public static var routingId: Self { .init(ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID") }
    /// This socket's long-term CURVE public key: 32 raw bytes or 40 Z85 characters.
    public static var curvePublicKey: Self { .init(ZMQ_CURVE_PUBLICKEY, "ZMQ_CURVE_PUBLICKEY") }
    /// This socket's long-term CURVE secret key: 32 raw bytes or 40 Z85 characters.
    public static var curveSecretKey: Self { .init(ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY") }
    /// The server's public key a CURVE client expects: 32 raw bytes or 40 Z85 characters.
    public static var curveServerKey: Self { .init(ZMQ_CURVE_SERVERKEY, "ZMQ_CURVE_SERVERKEY") }
}

extension SocketOption where Value == String {
    /// The endpoint last bound or connected, with wildcard ports resolved.
    public static var lastEndpoint: Self { .init(ZMQ_LAST_ENDPOINT, "ZMQ_LAST_ENDPOINT") }
    /// The ZAP authentication domain this socket asks the handler about.
    public static var zapDomain: Self { .init(ZMQ_ZAP_DOMAIN, "ZMQ_ZAP_DOMAIN") }
}
