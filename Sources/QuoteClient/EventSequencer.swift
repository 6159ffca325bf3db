/// Turns live events (which may arrive late, twice, or not at all) into the gap-free,
/// duplicate-free sequence a watcher prints, asking for replays where needed.
///
/// Pure logic: feed it what the SUB delivered and what replays returned; it says what to
/// print and which range to replay.
public struct EventSequencer: Sendable {
    /// The next sequence number to print; `nil` until known (no `--since`, no event yet).
    public private(set) var next: Int64?

    /// Starts after `since` (print `since + 1` next), or from the first live event.
    public init(since: Int64?) {
        next = since.map(Self.after)
    }

    /// The seq after `seq`; the largest stays itself (no seq follows it) rather than trap.
    private static func after(_ seq: Int64) -> Int64 {
        let (following, overflow) = seq.addingReportingOverflow(1)
        return overflow ? seq : following
    }

    /// What to do with one live event.
    public enum Decision: Sendable, Equatable {
        /// Print it.
        case print
        /// Already printed (replay overlap): skip it.
        case duplicate
        /// Events `from...to` are missing: replay them, then print this one.
        case gap(from: Int64, to: Int64)
    }

    /// Classifies a live event by its seq.
    public func classify(_ seq: Int64) -> Decision {
        guard let next else { return .print }
        if seq < next { return .duplicate }
        if seq > next { return .gap(from: next, to: seq - 1) }
        return .print
    }

    /// Records that `seq` was printed.
    public mutating func printed(_ seq: Int64) {
        next = Self.after(seq)
    }

    /// Whether the daemon's `lastSeq` shows events this watcher has not seen (a trailing gap).
    public func isBehind(lastSeq: Int64) -> Bool {
        guard let next else { return false }
        return lastSeq >= next
    }
}
