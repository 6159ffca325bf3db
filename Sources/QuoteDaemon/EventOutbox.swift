import QuoteWire

/// What leaves the events socket, and when: this daemon's commits and the others' read from
/// the log (``LogTail``), in `seq` order without a gap (``PublishOrder``), within the bytes a
/// stalled subscriber may hold (``EventWindow``).
///
/// This daemon's events are encoded only if someone may receive them. While nothing is
/// connected to the socket (``listened`` is false), its commits are kept as the store returned
/// them (``OutgoingEvent``) and passed over at their turn, as a PUB socket drops what no
/// subscriber matches; one whose turn comes after someone connected is encoded then. So
/// whoever connects hears every event from its first on, and a daemon no one listens to does
/// not write its own events. (Those ``LogTail`` reads come encoded.) Owned by the I/O thread;
/// pure logic.
struct EventOutbox {
    /// What an addition let out, in order.
    struct Release {
        /// The events to send now, encoded.
        var send: [PublishedEvent] = []
        /// How many events took their turn: sent, or passed over with no one to receive them.
        var released = 0
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
    private var order: PublishOrder<OutgoingEvent>
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
        guard listened || order.isOrdered else {
            // Alone on its store, with no one to receive them: they take their turn at once.
            let passed = order.pass(encoder.committedEventCount(encoded))
            return Release(released: passed)
        }
        let outgoing: [OutgoingEvent]
        if listened {
            outgoing = encoder.encodeEvents(encoded).map(OutgoingEvent.encoded)
        } else {
            let (events, currency) = encoder.committedEvents(encoded)
            outgoing = events.map { .unencoded($0, currency: currency) }
        }
        return release(order.add(outgoing))
    }

    /// Events read from the log after `after` (``LogTail/Delivery``), encoded.
    mutating func add(read events: [PublishedEvent], after: Int64) -> Release {
        let (ready, skipped) = order.addRead(after: after, events.map(OutgoingEvent.encoded))
        var out = release(ready)
        out.skipped = skipped
        return out
    }

    /// How many events the window held back since the last call.
    mutating func takeSkippedByWindow() -> Int { window.takeSkipped() }

    private mutating func release(_ ready: [OutgoingEvent]) -> Release {
        guard listened else { return Release(released: ready.count) }
        var send: [PublishedEvent] = []
        send.reserveCapacity(ready.count)
        for outgoing in ready {
            let event = outgoing.published(by: encoder)
            // A slow subscriber loses events past its high-water mark and fills the gap by seq.
            if window.admit(event.byteCount) { send.append(event) }
        }
        return Release(send: send, released: ready.count)
    }
}
