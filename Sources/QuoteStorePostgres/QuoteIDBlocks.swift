import QuoteStore
import Synchronization

/// Quote ids, taken from the `quote_ids` sequence a block at a time: one round trip per
/// ``blockSize`` submissions, and no lock shared with the other daemons. Ids are unique across
/// daemons but not gap-free: a daemon that stops leaves the rest of its block unused.
final class QuoteIDBlocks: Sendable {
    /// How many ids one `nextval` reserves: the sequence's increment.
    static let blockSize: Int64 = 1_000

    private struct State {
        /// The next id to hand out, and the end of its block (exclusive).
        var next: Int64 = 0
        var end: Int64 = 0
        var blockStart: Int64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// An id never handed out before from the block in hand, or `nil` when it is used up:
    /// then ``take(fromBlockAt:)`` with a new block's start (`nextval('quote_ids')`).
    func takeInHand() -> Int64? {
        state.withLock { state in Self.take(&state) }
    }

    /// An id from the block that starts at `start`, which `nextval('quote_ids')` reserved.
    func take(fromBlockAt start: Int64) throws(StoreError) -> Int64 {
        let id = state.withLock { state in
            // Another transaction may have reserved a block meanwhile: that one is used first,
            // and this one is left unused.
            if state.next >= state.end {
                // A sequence near its end gives a shorter block, not a trap.
                let (end, overflow) = start.addingReportingOverflow(Self.blockSize)
                state = State(next: start, end: overflow ? .max : end, blockStart: start)
            }
            return Self.take(&state)
        }
        guard let id else { throw StoreError(.corrupt, "quote ids are exhausted (the sequence gave \(start))") }
        return id
    }

    /// Hands back `ids`, taken in this order by a command that was then undone, when nothing
    /// was taken after them: the next submission gets them again.
    func giveBack(_ ids: [Int64]) {
        guard let first = ids.first, let last = ids.last else { return }
        state.withLock { state in
            if state.next == last + 1 && first >= state.blockStart { state.next = first }
        }
    }

    /// Drops the block in hand: after a failover, the new primary's sequence may not have seen
    /// the `nextval` that reserved it (a sequence's advance reaches the standby with the next
    /// commit), so ids come from a block it hands out.
    func discard() {
        state.withLock { $0 = State() }
    }

    private static func take(_ state: inout State) -> Int64? {
        guard state.next < state.end else { return nil }
        defer { state.next += 1 }
        return state.next
    }
}
