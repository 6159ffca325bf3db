public import Foundation
public import QuoteCore

/// The store's state as `stats` and the metrics' gauges report it: quotes by state, active
/// mechanics busy, free and off duty, since when the longest in line has waited, and the log's last `seq`.
/// Four reads on the store's read side, made on demand (a `stats` request, a scrape), never
/// per batch.
public struct StoreState: Sendable, Hashable {
    /// Quotes by state.
    public var counts: [QuoteStatus: Int]
    /// Active mechanics holding a booking.
    public var busy: Int
    /// Active mechanics free to book: free and on duty.
    public var free: Int
    /// Active mechanics off duty, busy or not.
    public var offDuty: Int = 0
    /// Since when the quote that has waited longest has waited; `nil` when none waits.
    public var oldestWaiting: Date?
    /// The log's last `seq`.
    public var lastSeq: Int64

    /// Reads it from `store`.
    public static func read(from store: any QuoteStore) async throws(StoreError) -> StoreState {
        let mechanics = try await store.mechanicCounts()
        return StoreState(
            counts: try await store.counts(), busy: mechanics.busy, free: mechanics.free, offDuty: mechanics.offDuty,
            oldestWaiting: try await store.longestWaitingSince(),
            lastSeq: try await store.lastSequence())
    }
}
