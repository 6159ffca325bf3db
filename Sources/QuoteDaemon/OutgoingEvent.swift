import QuoteCore
import QuoteStore
import QuoteWire

/// An event on its way to the events socket, in ``PublishOrder``: its frames, or, committed
/// while no one was connected to the socket, the event as the store returned it, encoded only
/// if someone has connected by its turn. Nothing is encoded for no one, and whoever connects
/// still receives every event from its first on.
enum OutgoingEvent {
    case encoded(PublishedEvent)
    case unencoded(StoredEvent, currency: Currency)

    /// The event's number in the log.
    var seq: Int64 {
        switch self {
        case .encoded(let event): event.seq
        case .unencoded(let event, _): event.seq
        }
    }

    /// The frames to send: encoded now if they were not.
    func published(by encoder: ReplyEncoder) -> PublishedEvent {
        switch self {
        case .encoded(let event): event
        case .unencoded(let event, let currency): encoder.encodeEvent(event, currency: currency)
        }
    }
}
