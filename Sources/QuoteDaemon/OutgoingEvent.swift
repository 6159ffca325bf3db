import QuoteCore
import QuoteStore
import QuoteWire

/// An event on its way to the events socket, in ``PublishOrder``: its frames, or, while no one
/// was connected to the socket, what it takes to pass it over (``EventOutbox``). Nothing is
/// encoded for no one, and whoever connects still receives every event from its first on.
enum OutgoingEvent {
    /// Its frames, ready to send.
    case encoded(PublishedEvent)
    /// This daemon's commit, as the store returned it: encoded at its turn if someone has
    /// connected by then.
    case unencoded(StoredEvent, currency: Currency)
    /// Another daemon's, read from the log (``LogTail``): its number alone. Should someone
    /// connect before its turn, the log is read again for it.
    case unread(seq: Int64)

    /// The event's number in the log.
    var seq: Int64 {
        switch self {
        case .encoded(let event): event.seq
        case .unencoded(let event, _): event.seq
        case .unread(let seq): seq
        }
    }

    /// Whether it can be sent as it is, or encoded to be; not one known by its number alone.
    var hasBody: Bool {
        if case .unread = self { false } else { true }
    }

    /// The frames to send: encoded now if they were not; `nil` for one known by its number
    /// alone.
    func published(by encoder: ReplyEncoder) -> PublishedEvent? {
        switch self {
        case .encoded(let event): event
        case .unencoded(let event, let currency): encoder.encodeEvent(event, currency: currency)
        case .unread: nil
        }
    }
}
