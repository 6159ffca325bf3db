/// A store's losses of its database server: what the metrics report as
/// `quoted_store_failovers_total` and `quoted_store_down_seconds_total`.
public struct StoreAvailability: Sendable, Hashable {
    /// Times the store moved to another server (a standby promoted after the primary was lost).
    public var failovers: Int
    /// Seconds, in all, during which no server accepted its writes.
    public var downSeconds: Double

    /// Counts of nothing lost yet.
    public init(failovers: Int = 0, downSeconds: Double = 0) {
        self.failovers = failovers
        self.downSeconds = downSeconds
    }
}
