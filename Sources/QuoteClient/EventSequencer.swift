/// Turns live events (which may arrive late, twice, or not at all) into the gap-free,
/// duplicate-free sequence a watcher prints, asking for replays where needed.
///
/// Pure logic: feed it what the SUB delivered and what replays returned; it says what to
/// print and which range to replay.
public struct EventSequencer: Sendable {
    /// The next sequence number to print; `nil` until known (no `--since`, no event yet).
    public private(set) var next: Int64?
    /// The largest seq there is was printed (or `--since` was it): nothing can follow.
    private var exhausted = false

    /// Starts after `since` (print `since + 1` next), or from the first live event.
    public init(since: Int64?) {
        if let since { record(since) }
    }

    /// Makes `seq` the last one printed: the next is the one after it, and after the largest
    /// there is none (rather than an overflow).
    private mutating func record(_ seq: Int64) {
        let (following, overflow) = seq.addingReportingOverflow(1)
        next = overflow ? seq : following
        exhausted = overflow
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
        if seq < next || exhausted { return .duplicate }
        if seq > next { return .gap(from: next, to: seq - 1) }
        return .print
    }

    /// Records that `seq` was printed.
    public mutating func printed(_ seq: Int64) {
        record(seq)
    }

    /// Whether the daemon's `lastSeq` shows events this watcher has not seen (a trailing gap).
    public func isBehind(lastSeq: Int64) -> Bool {
        guard let next, !exhausted else { return false }
        return lastSeq >= next
    }
}
