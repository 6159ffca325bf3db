public import QuoteCore
public import QuoteStore

extension WireEvent {
    /// `event` as clients see it, its amounts in `currency`; `withQuote: false` leaves out a
    /// quote event's quote, for a writer that splices in one it encoded already.
    public init(_ event: StoredEvent, currency: Currency, withQuote: Bool = true) {
        switch event.kind {
        case .quote(let from, let quote):
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.id.rawValue, from: from?.rawValue,
                to: quote.status.rawValue, by: event.by, quote: withQuote ? WireQuote(quote, currency: currency) : nil)
        case .quoteReassigned(let from, let quote):
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.id.rawValue, from: from.name,
                to: quote.mechanic?.name, by: event.by, quote: withQuote ? WireQuote(quote, currency: currency) : nil,
                mechanic: quote.mechanic.map(WireQuote.WireMechanic.init))
        case .mechanicBusy(let mechanic, let quote), .mechanicFree(let mechanic, let quote):
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.rawValue, by: event.by,
                mechanic: WireQuote.WireMechanic(mechanic))
        case .roster(let mechanic, let change):
            var from: String?
            var to: String?
            if case .updated(let previous) = change {
                from = previous.name
                to = mechanic.skill.name
            }
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: nil, from: from, to: to, by: event.by,
                mechanic: WireQuote.WireMechanic(mechanic))
        case .catalogApplied(let version):
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: nil, by: event.by, catalogVersion: version)
        case .mechanicDuty(let mechanic, _):
            self.init(
                seq: event.seq, type: event.type, at: event.at, quoteId: nil, by: event.by,
                mechanic: WireQuote.WireMechanic(mechanic))
        }
    }
}
