internal import CZeroMQ
internal import Synchronization

/// Monitors opened in this process: each reader's endpoint is new.
private let monitorsOpened = Atomic<Int>(0)

/// Connection events a socket monitor reports (`zmq_socket_monitor`).
public struct MonitorEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connected = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_CONNECTED))
    public static let connectDelayed = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_CONNECT_DELAYED))
    public static let connectRetried = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_CONNECT_RETRIED))
    public static let listening = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_LISTENING))
    public static let bindFailed = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_BIND_FAILED))
    public static let accepted = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_ACCEPTED))
    public static let acceptFailed = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_ACCEPT_FAILED))
    public static let closed = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_CLOSED))
    public static let closeFailed = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_CLOSE_FAILED))
    public static let disconnected = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_DISCONNECTED))
    public static let monitorStopped = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_MONITOR_STOPPED))
    /// The security handshake failed without a protocol error (e.g. a wrong CURVE key).
    public static let handshakeFailedNoDetail = MonitorEvents(
        rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
    /// The security handshake succeeded.
    public static let handshakeSucceeded = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_SUCCEEDED))
    /// The peer broke the ZMTP protocol during the handshake.
    public static let handshakeFailedProtocol = MonitorEvents(
        rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL))
    /// Authentication was refused (ZAP, or a CURVE key mismatch).
    public static let handshakeFailedAuth = MonitorEvents(rawValue: UInt16(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
    /// Every handshake failure.
    public static let handshakeFailed: MonitorEvents = [
        .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuth,
    ]
    /// Every event.
    public static let all = MonitorEvents(rawValue: UInt16(truncatingIfNeeded: ZMQ_EVENT_ALL))
}

/// One event read from a monitor socket.
public struct MonitorEvent: Sendable, Hashable {
    /// What happened (a single flag of ``MonitorEvents``).
    public var event: MonitorEvents
    /// The event's value: a descriptor, an errno or an interval, by event.
    public var value: UInt32
    /// The endpoint the event concerns.
    public var endpoint: String

    /// Parses the two frames a monitor socket sends per event.
    public init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let head = frames[0]
        event = MonitorEvents(rawValue: UInt16(head[0]) | UInt16(head[1]) << 8)
        value = UInt32(head[2]) | UInt32(head[3]) << 8 | UInt32(head[4]) << 16 | UInt32(head[5]) << 24
        endpoint = String(decoding: frames[1], as: UTF8.self)
    }
}

extension Socket {
    /// Publishes this socket's connection `events` on a PAIR socket at `endpoint`
    /// (an `inproc://` address); connect a ``SocketType/pair`` socket there to read them.
    ///
    /// Prefer ``openMonitor(events:)``, which also makes the reader safe to fall behind.
    public func monitor(_ endpoint: String, events: MonitorEvents = .all) throws(ZeroMQError) {
        guard zmq_socket_monitor(handle, endpoint, Int32(events.rawValue)) == 0 else {
            throw ZeroMQError.last("zmq_socket_monitor(\(endpoint))")
        }
    }

    /// Starts reporting this socket's connection `events` and returns the PAIR socket that
    /// reads them (with ``receiveMonitorEvent(dontWait:)``).
    ///
    /// libzmq sends each event from its own I/O thread and waits while it cannot be queued,
    /// so the reader's queue has no high-water mark: a reader that falls behind never stalls
    /// every connection of the context. Call ``stopMonitor()`` before the reader closes: an
    /// event sent to a reader that is gone blocks that I/O thread for good.
    public func openMonitor(events: MonitorEvents) throws(ZeroMQError) -> Socket {
        let number = monitorsOpened.add(1, ordering: .relaxed).newValue
        let endpoint = "inproc://zeromq-monitor-\(number)"
        try monitor(endpoint, events: events)
        let reader = try Socket(context, type: .pair)
        try reader.set(.linger, 0)
        try reader.set(.receiveHighWaterMark, 0)
        try reader.connect(endpoint)
        return reader
    }

    /// Stops the monitor, if any: no event is sent after it returns. Call it before the
    /// monitor's reader closes.
    public func stopMonitor() {
        zmq_socket_monitor(handle, nil, 0)
    }

    /// Reads one event from a monitor PAIR socket; `nil` if `dontWait` and none is waiting.
    public func receiveMonitorEvent(dontWait: Bool = false) throws(ZeroMQError) -> MonitorEvent? {
        guard let message = try receiveMultipart(dontWait: dontWait) else { return nil }
        return MonitorEvent(frames: message.frames)
    }
}
