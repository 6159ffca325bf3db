import QuoteWire

/// What leaves the events socket, and when: this daemon's commits and the others' read from
/// the log (``LogTail``), in `seq` order without a gap (``PublishOrder``), within the bytes a
/// stalled subscriber may hold (``EventWindow``).
///
/// An event is encoded only if someone may receive it. While nothing is connected to the
/// socket (``listened`` is false), this daemon's commits are kept as the store returned them,
/// and the others' that ``LogTail`` reads come as their numbers alone (``OutgoingEvent``):
/// each is passed over at its turn, as a PUB socket drops what no subscriber matches. Should
/// someone connect before its turn, a commit is encoded then, and for a number alone the log
/// is read again (``Release/rereadAfter``), encoded this time, before anything after it goes.
/// So whoever connects hears every event from its first on, and a daemon no one listens to
/// writes no event. Owned by the I/O thread; pure logic.
struct EventOutbox {
    /// What an addition let out, in order.
    struct Release {
        /// The events to send now, encoded.
        var send: [PublishedEvent] = []
        /// How many events took their turn: sent, or passed over with no one to receive them.
        var released = 0
        /// Numbers skipped because they left the log before they could be read.
        var skipped: Int64 = 0
        /// The log is to be read again after this number: the event after it, known by its
        /// number alone, has its turn, and someone may receive it.
        var rereadAfter: Int64?
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
    /// After which number the log was last asked to be read again, until a read arrives.
    private var rereadAsked: Int64?

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
        return release(order.add(outgoing, while: isReady))
    }

    /// Events read from the log after `after` (``LogTail/Delivery``): encoded, or their
    /// numbers alone.
    mutating func add(read events: [OutgoingEvent], after: Int64) -> Release {
        // A read arrived: if it left an event known by its number alone in the way, ask again.
        rereadAsked = nil
        let (ready, skipped) = order.addRead(after: after, events, while: isReady)
        var out = release(ready)
        out.skipped = skipped
        return out
    }

    /// What may go now that ``listened`` changed: numbers alone pass once no one listens.
    mutating func flush() -> Release {
        release(order.releaseHeld(while: isReady))
    }

    /// How many events the window held back since the last call.
    mutating func takeSkippedByWindow() -> Int { window.takeSkipped() }

    /// Whether `event` may take its turn: one known by its number alone, only while no one
    /// listens.
    private var isReady: (OutgoingEvent) -> Bool {
        { [listened] event in event.hasBody || !listened }
    }

    private mutating func release(_ ready: [OutgoingEvent]) -> Release {
        var out = Release(released: ready.count)
        if listened {
            out.send.reserveCapacity(ready.count)
            for outgoing in ready {
                guard let event = outgoing.published(by: encoder) else {
                    assertionFailure("a number alone had its turn while someone listened")
                    continue
                }
                // A slow subscriber loses events past its high-water mark and fills the gap by seq.
                if window.admit(event.byteCount) { out.send.append(event) }
            }
        }
        // The next in turn is known by its number alone, and someone listens: it is read again
        // (once until a read arrives).
        if listened, let next = order.nextHeld, !next.hasBody, rereadAsked != order.lastPublished {
            rereadAsked = order.lastPublished
            out.rereadAfter = order.lastPublished
        }
        return out
    }
}
