/// How many active mechanics are in each dispatch state, counted by the store: what `stats`
/// and the metrics report, read without loading the roster (a roster of 100,000 mechanics
/// loaded for a count took tens of megabytes a request).
public struct MechanicCounts: Sendable, Hashable {
    /// Holding a booking, on duty or not.
    public var busy: Int
    /// Free and on duty: the ones a booking can take.
    public var free: Int
    /// Off duty, busy or not.
    public var offDuty: Int

    /// Creates counts.
    public init(busy: Int, free: Int, offDuty: Int) {
        self.busy = busy
        self.free = free
        self.offDuty = offDuty
    }
}
