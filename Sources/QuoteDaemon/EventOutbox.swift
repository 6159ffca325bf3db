import QuoteWire

/// What leaves the events socket, and when: this daemon's commits and the others' read from
/// the log (``LogTail``), in `seq` order without a gap (``PublishOrder``), within the bytes a
/// stalled subscriber may hold (``EventWindow``).
///
/// An event is encoded only if someone may receive it. While nothing is connected to the
/// socket (``listened`` is false), every event takes its turn at once, unseen, as a PUB socket
/// drops what no subscriber matches: this daemon's commits unencoded, and the numbers before
/// them that the log was not read for (the tail reads nothing then). Once someone connects, the
/// order starts again from there: whoever connects hears every event from its first on. Owned
/// by the I/O thread; pure logic.
struct EventOutbox {
    /// What an addition let out, in order.
    struct Release {
        /// The events to send now, encoded.
        var send: [PublishedEvent] = []
        /// How many numbers took their turn: sent, or passed over with no one to receive them.
        var released: Int64 = 0
        /// Numbers skipped because they left the log before they could be read.
        var skipped: Int64 = 0
    }

    /// Whether anyone may receive an event: set by the I/O thread from the socket's monitor.
    /// When the last connection goes, so do the queues the window counted: it begins empty.
    var listened: Bool {
        didSet {
            if oldValue && !listened { window = EventWindow(capacity: window.capacity, budget: window.budget) }
        }
    }
    private var order: PublishOrder
    private(set) var window: EventWindow
    private let encoder: ReplyEncoder

    /// Events after `lastSeq`; `isOrdered` for a shared store (``PublishOrder``).
    init(after lastSeq: Int64, isOrdered: Bool, window: EventWindow, encoder: ReplyEncoder, listened: Bool = false) {
        order = PublishOrder(after: lastSeq, isOrdered: isOrdered)
        self.window = window
        self.encoder = encoder
        self.listened = listened
    }

    /// The last `seq` that took its turn.
    var lastPublished: Int64 { order.lastPublished }

    /// Whether an event waits for an earlier one, not read from the log yet.
    var isWaiting: Bool { order.isWaiting }

    /// The events of this daemon's commit whose replies are `encoded`.
    mutating func add(committed encoded: ReplyEncoder.EncodedReplies) -> Release {
        guard listened else { return Release(released: order.pass(through: encoder.lastEventSeq(encoded))) }
        return release(order.add(encoder.encodeEvents(encoded)))
    }

    /// Events read from the log after `after` (``LogTail/Delivery``), encoded.
    mutating func add(read events: [PublishedEvent], after: Int64) -> Release {
        guard listened else { return Release(released: order.pass(through: events.last?.seq)) }
        let (ready, skipped) = order.addRead(after: after, events)
        var out = release(ready)
        out.skipped = skipped
        return out
    }

    /// With no one listening, all that was held, and every number through `last` (the log's,
    /// as ``LogTail`` saw it), take their turn unseen; with someone, nothing changes: the tail
    /// reads them. Also what may go once ``listened`` changed (`last` `nil`).
    mutating func passUnheard(through last: Int64? = nil) -> Release {
        listened ? Release() : Release(released: order.pass(through: last))
    }

    /// How many events the window held back since the last call.
    mutating func takeSkippedByWindow() -> Int { window.takeSkipped() }

    private mutating func release(_ ready: [PublishedEvent]) -> Release {
        var out = Release(released: Int64(ready.count))
        out.send.reserveCapacity(ready.count)
        // A slow subscriber loses events past its high-water mark and fills the gap by seq.
        for event in ready where window.admit(event.byteCount) { out.send.append(event) }
        return out
    }
}
