internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// One ZeroMQ socket, owned by exactly one thread.
///
/// `Socket` is non-copyable and not `Sendable`: it is created, used and closed by one owner,
/// and the compiler refuses to share it across threads or tasks. It closes itself exactly
/// once, when its owner's lifetime ends (or on ``close(linger:)``), with the linger set on it.
///
/// Blocking calls retry `EINTR` themselves. A receive or send that would block returns `nil`
/// or `false` in non-blocking mode and throws ``ZeroMQError/Code/timeout`` when a configured
/// timeout runs out.
public struct Socket: ~Copyable {
    let handle: UnsafeMutableRawPointer
    /// A reusable message for receiving, so a receive allocates nothing but its result.
    private let scratch: UnsafeMutablePointer<zmq_msg_t>
    /// The context this socket belongs to; kept alive for as long as the socket is open.
    public let context: Context
    /// The socket's pattern.
    public let type: SocketType

    /// Opens a socket of `type` in `context`.
    public init(_ context: Context, type: SocketType) throws(ZeroMQError) {
        guard let handle = zmq_socket(context.handle, type.rawValue) else {
            throw ZeroMQError.last("zmq_socket(\(type))")
        }
        self.handle = handle
        self.context = context
        self.type = type
        self.scratch = .allocate(capacity: 1)
        zmq_msg_init(scratch)
    }

    deinit {
        zmq_msg_close(scratch)
        scratch.deallocate()
        // Its connections end after zmq_close, in libzmq's threads: with the monitor stopped
        // first, none of them waits on a monitor reader that may be gone by then.
        zmq_socket_monitor(handle, nil, 0)
        zmq_close(handle)
    }

    /// Closes the socket now, after setting its linger: how long unsent messages may still be
    /// delivered while the context terminates (`.zero` drops them at once).
    public consuming func close(linger: Duration? = nil) {
        if let linger {
            try? set(.linger, Int32(clamping: linger.milliseconds))
        }
    }

    // MARK: Endpoints

    /// Accepts connections on `endpoint`, such as `tcp://127.0.0.1:5555` or `tcp://127.0.0.1:*`.
    public func bind(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_bind(handle, endpoint) == 0 else { throw ZeroMQError.last("zmq_bind(\(endpoint))") }
    }

    /// Connects to `endpoint`; the connection itself happens, and is retried, in the background.
    public func connect(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_connect(handle, endpoint) == 0 else {
            throw ZeroMQError.last("zmq_connect(\(endpoint))")
        }
    }

    /// Stops accepting on an endpoint given to ``bind(_:)``.
    public func unbind(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_unbind(handle, endpoint) == 0 else {
            throw ZeroMQError.last("zmq_unbind(\(endpoint))")
        }
    }

    /// Drops a connection made by ``connect(_:)``.
    public func disconnect(_ endpoint: String) throws(ZeroMQError) {
        guard zmq_disconnect(handle, endpoint) == 0 else {
            throw ZeroMQError.last("zmq_disconnect(\(endpoint))")
        }
    }

    /// The endpoint last bound or connected, with a wildcard port resolved to the real one.
    public var lastEndpoint: String {
        (try? get(.lastEndpoint)) ?? ""
    }

    // MARK: Sending

    /// Sends one frame from raw bytes; `more` marks it as a part of a multipart message.
    ///
    /// - Returns: `false` if `dontWait` is set and the message cannot be queued now (the high
    ///   water mark is reached or no peer is there); `true` once it is queued.
    @discardableResult
    public func send(
        _ bytes: UnsafeRawBufferPointer, more: Bool = false, dontWait: Bool = false
    ) throws(ZeroMQError) -> Bool {
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        return try retrying("zmq_send", dontWait: dontWait) { zmq_send(handle, bytes.baseAddress, bytes.count, flags) }
    }

    /// Sends one frame; see ``send(_:more:dontWait:)-(UnsafeRawBufferPointer,_,_)``.
    @discardableResult
    public func send(_ bytes: [UInt8], more: Bool = false, dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        let result: Result<Bool, ZeroMQError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(ZeroMQError) -> Bool in try send(buffer, more: more, dontWait: dontWait) }
        }
        return try result.get()
    }

    /// Sends one frame holding the UTF-8 of `string`.
    @discardableResult
    public func send(_ string: String, more: Bool = false, dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        var string = string
        let result: Result<Bool, ZeroMQError> = string.withUTF8 { utf8 in
            Result { () throws(ZeroMQError) -> Bool in
                try send(UnsafeRawBufferPointer(utf8), more: more, dontWait: dontWait)
            }
        }
        return try result.get()
    }

    /// Sends every frame of `frames` as one multipart message, atomically.
    ///
    /// With `dontWait`, either the whole message is queued (`true`) or none of it (`false`):
    /// libzmq checks the high water mark only at a message's first frame.
    @discardableResult
    public func send(multipart frames: [[UInt8]], dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        guard !frames.isEmpty else { return true }
        let last = frames.count - 1
        for index in 0...last {
            let queued = try send(frames[index], more: index < last, dontWait: dontWait && index == 0)
            if !queued { return false }
        }
        return true
    }

    /// Sends `first` then `second` as one two-frame message, atomically, as the array form of
    /// `send(multipart:dontWait:)` sends its frames: with no array made for two frames.
    @discardableResult
    public func send(multipart first: [UInt8], _ second: [UInt8], dontWait: Bool = false) throws(ZeroMQError) -> Bool {
        guard try send(first, more: true, dontWait: dontWait) else { return false }
        return try send(second, more: false, dontWait: false)
    }

    // MARK: Receiving

    /// Receives into the scratch message; `false` if non-blocking and nothing is waiting.
    private func receiveScratch(dontWait: Bool) throws(ZeroMQError) -> Bool {
        let flags = dontWait ? ZMQ_DONTWAIT : 0
        return try retrying("zmq_msg_recv", dontWait: dontWait) { zmq_msg_recv(scratch, handle, flags) }
    }

    /// Runs `call` (a libzmq send or receive, `operation`) until it is not interrupted:
    /// `true` once it succeeds, `false` when `dontWait` is set and it would block.
    func retrying(
        _ operation: String, dontWait: Bool, _ call: () -> Int32
    ) throws(ZeroMQError) -> Bool {
        while true {
            if call() >= 0 { return true }
            let error = zmq_errno()
            if error == EINTR { continue }
            if error == EAGAIN && dontWait { return false }
            throw ZeroMQError(errno: error, operation: "\(operation)(\(type))")
        }
    }

    private func scratchBytes() -> [UInt8] {
        let count = zmq_msg_size(scratch)
        guard count > 0, let data = zmq_msg_data(scratch) else { return [] }
        // Copied from a buffer pointer: an array made with room to fill in place would look up
        // its storage's type at run time, dearer than the copy of a small frame.
        return [UInt8](UnsafeRawBufferPointer(start: data, count: count))
    }

    /// Receives one frame.
    ///
    /// - Returns: the frame's bytes, or `nil` if `dontWait` is set and nothing is waiting.
    public func receive(dontWait: Bool = false) throws(ZeroMQError) -> [UInt8]? {
        guard try receiveScratch(dontWait: dontWait) else { return nil }
        return scratchBytes()
    }

    /// Whether the frame last received has more frames after it in the same message.
    public var hasMore: Bool {
        zmq_msg_more(scratch) != 0
    }

    /// Receives a whole multipart message.
    ///
    /// - Parameters:
    ///   - dontWait: return `nil` at once when no message is waiting.
    ///   - metadata: connection properties to read off the message, such as `"User-Id"`
    ///     (set by a ZAP handler) or `"Peer-Address"`; absent ones are left out.
    ///   - maximumFrames: the most frames copied; those after are released unread and
    ///     counted in ``Multipart/droppedFrames``.
    public func receiveMultipart(
        dontWait: Bool = false, metadata: [String] = [], maximumFrames: Int = .max
    ) throws(ZeroMQError) -> Multipart? {
        guard try receiveScratch(dontWait: dontWait) else { return nil }
        var properties: [String: String] = [:]
        readMetadata(metadata, into: &properties)
        // Room for a request's usual three frames (identity, delimiter, body) and a fourth:
        // the array is not grown frame by frame.
        var frames: [[UInt8]] = []
        frames.reserveCapacity(4)
        frames.append(scratchBytes())
        var dropped = 0
        // libzmq delivers a multipart message atomically: the other frames are already here.
        // Past `maximumFrames` they are taken and released, not copied: libzmq bounds each
        // frame (`ZMQ_MAXMSGSIZE`) but not how many a message has.
        while zmq_msg_more(scratch) != 0 {
            _ = try receiveScratch(dontWait: false)
            guard frames.count < maximumFrames else {
                dropped += 1
                continue
            }
            readMetadata(metadata, into: &properties)
            frames.append(scratchBytes())
        }
        return Multipart(frames: frames, metadata: properties, droppedFrames: dropped)
    }

    /// Reads the requested properties off the frame in the scratch message. A ROUTER's
    /// synthesized identity frame carries none, so every frame is asked until each is found.
    private func readMetadata(_ keys: [String], into properties: inout [String: String]) {
        for key in keys where properties[key] == nil {
            if let value = zmq_msg_gets(scratch, key) { properties[key] = String(cString: value) }
        }
    }

    /// Receives one frame as UTF-8 text (invalid bytes are repaired), or `nil` if none waits.
    public func receiveString(dontWait: Bool = false) throws(ZeroMQError) -> String? {
        guard let bytes = try receive(dontWait: dontWait) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A multipart message as received: its frames, and the connection metadata asked for.
public struct Multipart: Sendable, Hashable {
    /// The frames, in order.
    public var frames: [[UInt8]]
    /// The requested connection properties present on the message (e.g. `User-Id`).
    public var metadata: [String: String]
    /// How many frames past the receiver's maximum were dropped unread.
    public var droppedFrames = 0

    /// Takes the frames out of the message, which keeps none: handed over whole rather than
    /// shared, the array can be changed in place.
    public mutating func takeFrames() -> [[UInt8]] {
        var taken: [[UInt8]] = []
        swap(&taken, &frames)
        return taken
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, saturating at the bounds of `Int64`.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        return ms + attoseconds / 1_000_000_000_000_000
    }
}
