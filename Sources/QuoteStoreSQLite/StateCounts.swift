import QuoteCore

/// Quotes by state, kept by the writer as it commits, so that `stats` and the metrics' gauges
/// cost the same whatever the store holds: counting the table is a scan of every quote
/// (a quarter of a second at a million), and any reading key may ask as often as it likes.
///
/// Counted from the table once, on the writer's thread (no commit can fall between), the
/// first time they are asked for; then every committed transaction adds its changes. A
/// transaction whose outcome is unknown forgets them, to be counted again.
struct StateCounts {
    /// Counts, one per state, in the order `slot(_:)` gives.
    private(set) var values: [Int]

    init(_ counts: [QuoteStatus: Int]) {
        values = Array(repeating: 0, count: QuoteStatus.allCases.count)
        for (status, count) in counts { values[Self.slot(status)] = count }
    }

    /// The counts by state.
    var byStatus: [QuoteStatus: Int] {
        Dictionary(uniqueKeysWithValues: QuoteStatus.allCases.map { ($0, values[Self.slot($0)]) })
    }

    /// Adds one transaction's changes, as ``record(from:to:in:)`` made them; `false`, and
    /// nothing added, when a count would fall below zero (they no longer match the table).
    mutating func apply(_ changes: [Int]) -> Bool {
        var next = values
        for (slot, change) in changes.enumerated() {
            let (sum, overflow) = next[slot].addingReportingOverflow(change)
            guard !overflow, sum >= 0 else { return false }
            next[slot] = sum
        }
        values = next
        return true
    }

    /// Records in `changes` (empty, or one entry per state) that a quote went `from` a state
    /// (`nil` for a new quote) `to` another.
    static func record(from: QuoteStatus?, to: QuoteStatus, in changes: inout [Int]) {
        guard from != to else { return }
        if changes.isEmpty { changes = Array(repeating: 0, count: QuoteStatus.allCases.count) }
        if let from { changes[slot(from)] -= 1 }
        changes[slot(to)] += 1
    }

    /// A state's place: a switch, not a comparison of raw values.
    private static func slot(_ status: QuoteStatus) -> Int {
        switch status {
        case .submitted: 0
        case .pending: 1
        case .ready: 2
        case .booked: 3
        case .completed: 4
        case .cancelled: 5
        case .waiting: 6
        }
    }
}
