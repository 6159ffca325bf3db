import ZeroMQ

/// The connections both sockets hold, counted from their monitors (`accepted`, then
/// `disconnected` when the connection ends, handshake refused or not), against a limit.
///
/// A connection counts from the moment it is accepted, before its handshake: one that never
/// completes it is dropped after the handshake timeout. Unbinding the events socket drops
/// its connections without a `disconnected` each, so ``eventsUnbound()`` starts its count
/// over.
struct ConnectionCount {
    /// Which socket an event came from.
    enum Socket {
        case commands, events
    }

    let limit: Int
    private var commands = 0
    private var events = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Connections held now.
    var open: Int { commands + events }

    /// Whether a new handshake is to be refused: the limit is passed (the connection asking
    /// is already counted).
    var isFull: Bool { open > limit }

    mutating func record(_ event: MonitorEvents, on socket: Socket) {
        var count = socket == .commands ? commands : events
        if event == .accepted { count += 1 }
        if event == .disconnected { count = max(0, count - 1) }
        if socket == .commands { commands = count } else { events = count }
    }

    /// The events socket was unbound: every connection it had is gone.
    mutating func eventsUnbound() {
        events = 0
    }
}
