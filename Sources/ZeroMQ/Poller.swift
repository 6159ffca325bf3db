internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// What a poll waits for, and what it found.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    /// A message can be received (or, for a descriptor, it is readable).
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without blocking.
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
    /// A descriptor reported an error condition.
    public static let error = PollEvents(rawValue: Int16(ZMQ_POLLERR))
}

/// Waits on several sockets and file descriptors at once, with a timeout (`zmq_poll`).
///
/// A poller refers to its sockets by handle: register sockets that outlive it, and poll on
/// the thread that owns them. It allocates once, at registration, never per poll.
public struct Poller {
    private var items: [zmq_pollitem_t] = []

    /// Creates an empty poller.
    public init() {}

    /// Watches `socket` for `events`; returns the index to ask ``events(at:)`` about.
    @discardableResult
    public mutating func register(_ socket: borrowing Socket, for events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: socket.handle, fd: -1, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Watches a plain file descriptor (a pipe, an eventfd) alongside the sockets.
    @discardableResult
    public mutating func register(fileDescriptor: Int32, for events: PollEvents = .readable) -> Int {
        items.append(zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: events.rawValue, revents: 0))
        return items.count - 1
    }

    /// Waits until at least one registered item is ready, or `timeout` passes (`nil`: forever).
    ///
    /// - Returns: how many items are ready; `0` when the timeout passed or a signal arrived.
    @discardableResult
    public mutating func poll(timeout: Duration?) throws(ZeroMQError) -> Int {
        let milliseconds = timeout.map { Int(clamping: max($0.milliseconds, 0)) } ?? -1
        let count = Int32(items.count)
        let rc = items.withUnsafeMutableBufferPointer { zmq_poll($0.baseAddress, count, milliseconds) }
        if rc >= 0 { return Int(rc) }
        let error = zmq_errno()
        if error == EINTR {
            for index in items.indices { items[index].revents = 0 }
            return 0
        }
        throw ZeroMQError(errno: error, operation: "zmq_poll")
    }

    /// What the item registered at `index` was found ready for by the last ``poll(timeout:)``.
    public func events(at index: Int) -> PollEvents {
        PollEvents(rawValue: items[index].revents)
    }

    /// Whether the item at `index` has a message to receive.
    public func isReadable(_ index: Int) -> Bool {
        events(at: index).contains(.readable)
    }
}
