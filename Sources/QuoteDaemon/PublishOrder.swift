import QuoteWire

/// The order events leave the PUB socket in: by `seq`, with no gap, whoever committed them.
///
/// With a store that only this daemon writes, its own commits are the whole log, in order, and
/// pass straight through. With a shared store (several daemons on one database), the log
/// interleaves their commits: an event of this daemon's is held while an earlier number is
/// missing, until ``LogTail`` has read the missing events from the log. Owned by the I/O
/// thread; pure logic, over anything numbered by its `seq` (``OutgoingEvent``).
struct PublishOrder<Event: Numbered> {
    /// The next `seq` to publish.
    private(set) var next: Int64
    /// Whether events are held for earlier ones (a shared store's log).
    let isOrdered: Bool
    /// Events that arrived before their turn, by `seq`.
    private var held: [Int64: Event] = [:]
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
    /// and returns what can be published now, in order: on a shared store, up to the first
    /// that is not `ready`, which waits with those after it for a later call. An event already
    /// published is dropped, and one without its body never replaces one with it.
    mutating func add(_ events: [Event], while ready: (Event) -> Bool = { _ in true }) -> [Event] {
        guard isOrdered else {
            if let last = events.last { next = max(next, Self.after(last.seq)) }
            return events
        }
        for event in events where event.seq >= next && !exhausted {
            if !event.hasBody, held[event.seq]?.hasBody == true { continue }
            held[event.seq] = event
        }
        return release(while: ready)
    }

    /// What can be published now of what is held, up to the first that is not `ready`.
    mutating func releaseHeld(while ready: (Event) -> Bool) -> [Event] {
        release(while: ready)
    }

    /// The event whose turn it is, if it has arrived.
    var nextHeld: Event? { held[next] }

    /// Lets `events.count` events, numbered up to `events.last`, take their turn unseen: on a
    /// store this daemon alone writes, its commits, when no one can receive them. Returns how
    /// many passed.
    mutating func pass(_ events: (count: Int, last: Int64?)) -> Int {
        guard let last = events.last, !isOrdered else { return 0 }
        next = max(next, Self.after(last))
        return events.count
    }

    /// A read of the log for what follows `after` began at `first`: what lies between, if
    /// this order still waits for it, is no longer in the log (pruned before it could be
    /// read), and is skipped. Returns what can be published now, and how many were skipped.
    mutating func logBegins(
        at first: Int64, readAfter after: Int64, while ready: (Event) -> Bool = { _ in true }
    ) -> (ready: [Event], skipped: Int64) {
        guard isOrdered, after < next, first > next else { return ([], 0) }
        let skipped = first - next
        held = held.filter { $0.key >= first }
        next = first
        return (release(while: ready), skipped)
    }

    /// Takes `events`, read from the log after `after` (``LogTail``): what lies between, if
    /// still awaited, is skipped (``logBegins(at:readAfter:while:)``), then the events are added.
    /// Returns what can be published now, in order, and how many numbers were skipped.
    mutating func addRead(
        after: Int64, _ events: [Event], while ready: (Event) -> Bool = { _ in true }
    ) -> (ready: [Event], skipped: Int64) {
        guard let first = events.first else { return ([], 0) }
        var (released, skipped) = logBegins(at: first.seq, readAfter: after, while: ready)
        released += add(events, while: ready)
        return (released, skipped)
    }

    private mutating func release(while isReady: (Event) -> Bool) -> [Event] {
        var ready: [Event] = []
        while let event = held[next], isReady(event) {
            held[next] = nil
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

/// What ``PublishOrder`` puts in order: an event, by its number in the log.
protocol Numbered {
    /// The number in the log.
    var seq: Int64 { get }
    /// Whether it holds what is sent, or only its number.
    var hasBody: Bool { get }
}

extension PublishedEvent: Numbered {
    var hasBody: Bool { true }
}

extension OutgoingEvent: Numbered {}
