import ZeroMQ

/// The connections both sockets hold, counted from their monitors (`accepted`, then
/// `disconnected` when the connection ends, handshake refused or not), against a limit.
struct ConnectionCount {
    let limit: Int
    private(set) var open = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether a new handshake is to be refused: the limit is reached (the connection asking
    /// is already counted).
    var isFull: Bool { open > limit }

    mutating func record(_ event: MonitorEvents) {
        if event == .accepted { open += 1 }
        if event == .disconnected { open = max(0, open - 1) }
    }
}
