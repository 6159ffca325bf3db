/// What the event log keeps: an event is pruned only when it is older than `minimumAge`
/// and not among the last `minimumCount`, so subscribers can always replay that much.
public struct EventRetention: Sendable, Hashable {
    /// Events younger than this are kept.
    public var minimumAge: Duration
    /// At least this many of the latest events are kept.
    public var minimumCount: Int

    /// The most rows one prune transaction deletes (`QuoteStore.pruneEvents(now:batch:)`).
    public static let pruneBatch = 10_000

    /// Creates a retention promise; the default keeps 7 days and at least 100,000 events.
    public init(minimumAge: Duration = .seconds(7 * 24 * 3600), minimumCount: Int = 100_000) {
        self.minimumAge = minimumAge
        self.minimumCount = minimumCount
    }
}
