import QuoteWire

/// The order events leave the PUB socket in: by `seq`, with no gap, whoever committed them.
///
/// With a store that only this daemon writes, its own commits are the whole log, in order, and
/// pass straight through. With a shared store (several daemons on one database), the log
/// interleaves their commits: an event of this daemon's is held while an earlier number is
/// missing, until ``LogTail`` has read the missing events from the log. Owned by the I/O
/// thread; pure logic.
struct PublishOrder {
    /// The next `seq` to publish.
    private(set) var next: Int64
    /// Whether events are held for earlier ones (a shared store's log).
    let isOrdered: Bool
    /// Events that arrived before their turn, by `seq`.
    private var held: [Int64: PublishedEvent] = [:]
    /// Whether `Int64.max`, which nothing follows, was published (the stores number no event
    /// past it; stored numbers are not trusted not to reach it).
    private var exhausted = false

    /// Publishes from `lastSeq + 1` on; `isOrdered` for a shared store.
    init(after lastSeq: Int64, isOrdered: Bool) {
        next = Self.after(lastSeq)
        exhausted = lastSeq == .max
        self.isOrdered = isOrdered
    }

    /// The number after `seq`; `Int64.max` for the last there is.
    private static func after(_ seq: Int64) -> Int64 {
        seq == .max ? .max : seq + 1
    }

    /// Whether an event is held because an earlier one has not arrived yet.
    var isWaiting: Bool { !held.isEmpty }

    /// The last `seq` published.
    var lastPublished: Int64 { exhausted ? .max : next - 1 }

    /// Takes `events` (by `seq`, this daemon's commits or read from the log)
    /// and returns what can be published now, in order. An event already published is
    /// dropped.
    mutating func add(_ events: [PublishedEvent]) -> [PublishedEvent] {
        guard isOrdered else {
            if let last = events.last { next = max(next, Self.after(last.seq)) }
            return events
        }
        for event in events where event.seq >= next && !exhausted {
            held[event.seq] = event
        }
        return release()
    }

    /// Lets every event held, and every number through `last`, take its turn unseen, those not
    /// read yet included: while no one can receive events. Returns how many numbers went.
    mutating func pass(through last: Int64?) -> Int64 {
        defer { held = [:] }
        guard !exhausted, let end = [last, held.keys.max()].compactMap({ $0 }).max(), end >= next else { return 0 }
        let passed = end - next + 1
        if end == .max { exhausted = true } else { next = end + 1 }
        return passed
    }

    /// A read of the log for what follows `after` began at `first`: what lies between, if
    /// this order still waits for it, is no longer in the log (pruned before it could be
    /// read), and is skipped. Returns what can be published now, and how many were skipped.
    mutating func logBegins(at first: Int64, readAfter after: Int64) -> (ready: [PublishedEvent], skipped: Int64) {
        guard isOrdered, after < next, first > next else { return ([], 0) }
        let skipped = first - next
        held = held.filter { $0.key >= first }
        next = first
        return (release(), skipped)
    }

    /// Takes `events`, read from the log after `after` (``LogTail``): what lies between, if
    /// still awaited, is skipped (``logBegins(at:readAfter:)``), then the events are added.
    /// Returns what can be published now, in order, and how many numbers were skipped.
    mutating func addRead(
        after: Int64, _ events: [PublishedEvent]
    ) -> (ready: [PublishedEvent], skipped: Int64) {
        guard let first = events.first else { return ([], 0) }
        var (ready, skipped) = logBegins(at: first.seq, readAfter: after)
        ready += add(events)
        return (ready, skipped)
    }

    private mutating func release() -> [PublishedEvent] {
        var ready: [PublishedEvent] = []
        while let event = held.removeValue(forKey: next) {
            ready.append(event)
            guard next < .max else {
                exhausted = true
                break
            }
            next += 1
        }
        return ready
    }
}
