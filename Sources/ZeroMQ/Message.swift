internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// One frame held by libzmq (`zmq_msg_t`), for zero-copy receiving, inspecting and
/// forwarding: a message received on one socket can be sent on, or back, without its bytes
/// being copied. Non-copyable: exactly one owner, closed exactly once.
public struct Message: ~Copyable {
    var raw = zmq_msg_t()

    /// An empty frame.
    public init() {
        zmq_msg_init(&raw)
    }

    /// A frame holding a copy of `bytes`.
    public init(_ bytes: UnsafeRawBufferPointer) {
        zmq_msg_init_size(&raw, bytes.count)
        if bytes.count > 0 { zmq_msg_data(&raw).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    /// A frame holding a copy of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.init()
        bytes.withUnsafeBytes { buffer in
            zmq_msg_close(&raw)
            zmq_msg_init_size(&raw, buffer.count)
            if buffer.count > 0 { zmq_msg_data(&raw).copyMemory(from: buffer.baseAddress!, byteCount: buffer.count) }
        }
    }

    deinit {
        // A zmq_msg_t may be moved bitwise (libzmq itself does); close the final copy.
        var final = raw
        zmq_msg_close(&final)
    }

    /// The frame's size in bytes.
    public var count: Int {
        mutating get { zmq_msg_size(&raw) }
    }

    /// Whether more frames of the same message follow this one.
    public var hasMore: Bool {
        mutating get { zmq_msg_more(&raw) != 0 }
    }

    /// Reads the frame's bytes in place, without copying them.
    public mutating func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let count = zmq_msg_size(&raw)
        return try body(UnsafeRawBufferPointer(start: count == 0 ? nil : zmq_msg_data(&raw), count: count))
    }

    /// A copy of the frame's bytes.
    public var bytes: [UInt8] {
        mutating get { withUnsafeBytes { Array($0) } }
    }

    /// A connection property of the frame, such as `User-Id` or `Peer-Address`.
    public mutating func metadata(_ property: String) -> String? {
        zmq_msg_gets(&raw, property).map { String(cString: $0) }
    }
}

extension Socket {
    /// Receives one frame into `message`, replacing what it held, without copying.
    ///
    /// - Returns: `false` if `dontWait` is set and nothing is waiting.
    public func receive(_ message: inout Message, dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        let flags = dontWait ? ZMQ_DONTWAIT : 0
        return try retrying("zmq_msg_recv", dontWait: dontWait) { zmq_msg_recv(&message.raw, handle, flags) }
    }

    /// Sends `message` without copying; on success it is left empty, ready for reuse.
    ///
    /// - Returns: `false` if `dontWait` is set and it cannot be queued now (it is kept).
    @discardableResult
    public func send(_ message: inout Message, more: Bool = false, dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        return try retrying("zmq_msg_send", dontWait: dontWait) { zmq_msg_send(&message.raw, handle, flags) }
    }
}
