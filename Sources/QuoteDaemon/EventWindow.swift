/// Bounds in bytes what the events socket can hold for subscribers that stop reading.
///
/// libzmq queues up to its high-water mark of messages per subscriber, counting messages,
/// not bytes; a subscriber that stops reading holds a run of at most that many consecutive
/// events (each one message, shared by every subscriber's queue). So the window keeps the
/// sizes of the last `capacity` events published, and an event that would take their total
/// past `budget` is not published live: subscribers see the gap and fill it by `seq` from the
/// log, as they do after any loss. With ordinary events the budget is never reached.
struct EventWindow {
    /// The events socket's high-water mark, in messages.
    let capacity: Int
    /// Bytes the last `capacity` events published may add up to.
    let budget: Int
    private var sizes: [Int]
    private var next = 0
    private var total = 0
    /// Events left unpublished since the last ``takeSkipped()``.
    private(set) var skipped = 0

    init(capacity: Int, budget: Int) {
        self.capacity = max(1, capacity)
        self.budget = budget
        sizes = Array(repeating: 0, count: self.capacity)
    }

    /// Whether an event of `size` bytes may be published now; if so, it is counted in.
    mutating func admit(_ size: Int) -> Bool {
        let leaving = sizes[next]
        guard total - leaving + size <= budget else {
            skipped += 1
            return false
        }
        total += size - leaving
        sizes[next] = size
        next = next + 1 == capacity ? 0 : next + 1
        return true
    }

    /// How many events were left unpublished since the last call.
    mutating func takeSkipped() -> Int {
        defer { skipped = 0 }
        return skipped
    }
}
