import ZeroMQ

/// The connections both sockets hold, counted from their monitors, against a limit.
///
/// Every connection ends its handshake once, in success or failure (refused, broken, or cut by
/// the handshake timeout), and later disconnects once. So those that completed their handshake
/// and are still open number the successes plus the failures less the disconnections: a
/// connection that never completes its handshake, however many, counts against no one. It is
/// dropped after the handshake timeout. Unbinding the events socket drops its connections
/// without a `disconnected` each, so ``eventsUnbound()`` starts its count over.
struct ConnectionCount {
    /// Which socket an event came from.
    enum Socket {
        case commands, events
    }

    /// One socket's events, counted.
    private struct Events {
        var accepted = 0
        var succeeded = 0
        var failed = 0
        var disconnected = 0

        /// Connections past their handshake and still open.
        var established: Int { max(0, succeeded + failed - disconnected) }
        /// Connections accepted whose handshake has not ended yet.
        var handshaking: Int { max(0, accepted - succeeded - failed) }
    }

    /// The events a socket's monitor must report for the count.
    static let monitored: MonitorEvents = [.accepted, .handshakeSucceeded, .handshakeFailed, .disconnected]

    let limit: Int
    private var commands = Events()
    private var events = Events()

    init(limit: Int) {
        self.limit = limit
    }

    /// Connections past their handshake and open now.
    var established: Int { commands.established + events.established }

    /// Connections accepted whose handshake has not ended yet.
    var handshaking: Int { commands.handshaking + events.handshaking }

    /// Whether a new handshake is to be refused: `limit` connections have completed theirs and
    /// are open. Connections that never complete a handshake never make it so.
    var isFull: Bool { established >= limit }

    mutating func record(_ event: MonitorEvents, on socket: Socket) {
        var counts = socket == .commands ? commands : events
        if event == .accepted {
            counts.accepted += 1
        } else if event == .handshakeSucceeded {
            counts.succeeded += 1
        } else if MonitorEvents.handshakeFailed.contains(event) {
            counts.failed += 1
        } else if event == .disconnected {
            counts.disconnected += 1
        }
        if socket == .commands { commands = counts } else { events = counts }
    }

    /// The events socket was unbound: every connection it had is gone.
    mutating func eventsUnbound() {
        events = Events()
    }
}
