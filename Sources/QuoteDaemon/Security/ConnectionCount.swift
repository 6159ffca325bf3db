import ZeroMQ

/// The connections both sockets hold, counted from their monitors (`accepted`, then
/// `disconnected` when the connection ends, handshake refused or not), against two limits:
/// all of them, and those from one address (``PeerAddress``).
///
/// A connection counts from the moment it is accepted, before its handshake: one that never
/// completes it is dropped after the handshake timeout. So that peers from one address that
/// connect and never speak cannot fill the whole count and lock listed keys out, an address
/// counts toward the total for at most `perAddressLimit` connections; its connections past
/// that are refused their handshake. Unbinding the events socket drops its connections
/// without a `disconnected` each, so ``eventsUnbound()`` takes them all out: when quoted
/// unbinds, and again at the listener's `closed`, after which it accepts no more. (A bind
/// that fails sends a `closed` too: harmless, since no connection comes before a bind that
/// holds.)
///
/// Each connection is known by its descriptor, from its `accepted` to its `disconnected`.
/// Should a descriptor be closed and reused before its peer is read, both events of the first
/// connection name the second's address: the counts still balance. This holds because one
/// I/O thread (the context's default) sends a socket's events: a connection's `accepted`
/// before its `disconnected`, and before its handshake reaches the ZAP handler.
struct ConnectionCount {
    /// Which socket an event came from.
    enum Socket {
        case commands, events
    }

    /// Which limit a new handshake would pass.
    enum Limit: Equatable {
        /// `maxConnections`: every connection, each address's counted up to its own limit.
        case total
        /// `maxConnectionsPerAddress`.
        case perAddress
    }

    let limit: Int
    let perAddressLimit: Int
    /// The address of each open connection, by descriptor, per socket; `nil` for one whose
    /// address is unknown (`ipc://`, or closed before it was read), which counts in full.
    private var commands: [UInt32: PeerAddress?] = [:]
    private var events: [UInt32: PeerAddress?] = [:]
    /// Open connections by address, on both sockets.
    private var byAddress: [PeerAddress: Int] = [:]
    /// Open connections of unknown address, on both sockets.
    private var unknown = 0
    /// What counts toward `limit`: `unknown`, plus each address's count up to
    /// `perAddressLimit`.
    private(set) var counted = 0

    init(limit: Int, perAddressLimit: Int) {
        self.limit = limit
        self.perAddressLimit = perAddressLimit
    }

    /// Connections held now, whatever their address.
    var open: Int { commands.count + events.count }

    /// Connections the events socket holds now: while there are none, no one can receive an
    /// event.
    var eventsOpen: Int { events.count }

    /// The limit a new handshake from `address` (as its ZAP request names it) would pass, the
    /// connection asking being already counted; `nil` when it may go on.
    func exceeded(from address: String) -> Limit? {
        if let peer = PeerAddress(zapAddress: address), byAddress[peer, default: 0] > perAddressLimit {
            return .perAddress
        }
        return counted > limit ? .total : nil
    }

    mutating func record(_ event: MonitorEvent, on socket: Socket) {
        if event.event == .accepted {
            let peer = PeerAddress(descriptor: Int32(bitPattern: event.value))
            // A descriptor already held (its `disconnected` never came) is replaced.
            if let earlier = take(event.value, on: socket) { forget(earlier) }
            if socket == .commands { commands[event.value] = peer } else { events[event.value] = peer }
            add(peer)
        } else if event.event == .disconnected, let peer = take(event.value, on: socket) {
            forget(peer)
        } else if event.event == .closed, socket == .events {
            // The unbound listener is closed: connections it accepted after the unbind are gone
            // too, without a `disconnected` each.
            eventsUnbound()
        }
    }

    /// The events socket was unbound: every connection it had is gone.
    mutating func eventsUnbound() {
        for peer in events.values { forget(peer) }
        events = [:]
    }

    /// Removes `descriptor`'s entry on `socket`: its address, `.some(nil)` when unknown, and
    /// `nil` when it has none.
    private mutating func take(_ descriptor: UInt32, on socket: Socket) -> PeerAddress?? {
        socket == .commands ? commands.removeValue(forKey: descriptor) : events.removeValue(forKey: descriptor)
    }

    private mutating func add(_ peer: PeerAddress?) {
        guard let peer else {
            unknown += 1
            counted += 1
            return
        }
        let count = byAddress[peer, default: 0] + 1
        byAddress[peer] = count
        if count <= perAddressLimit { counted += 1 }
    }

    private mutating func forget(_ peer: PeerAddress?) {
        guard let peer else {
            unknown -= 1
            counted -= 1
            return
        }
        let count = byAddress[peer, default: 0]
        guard count > 0 else { return }
        if count <= perAddressLimit { counted -= 1 }
        byAddress[peer] = count == 1 ? nil : count - 1
    }
}
