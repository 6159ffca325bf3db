public import QuoteCore
public import QuoteStore

extension WireEvent {
    /// `event` as clients see it, its amounts in `currency`.
    public init(_ event: StoredEvent, currency: Currency) {
        let members = Members(event.kind)
        self.init(
            seq: event.seq, type: event.type, at: event.at, quoteId: members.quoteId, from: members.from,
            to: members.to, by: event.by,
            quote: event.quote.map { WireQuote($0, currency: currency) },
            mechanic: members.mechanic.map(WireQuote.WireMechanic.init), catalogVersion: members.catalogVersion)
    }

    /// What an event of each kind carries besides its `seq`, type, time, actor and quote: the
    /// one place that says it, for ``WireEvent/init(_:currency:)`` and for the
    /// daemon's writer, which writes events straight from the log.
    struct Members {
        var quoteId: Int64?
        var from: String?
        var to: String?
        var mechanic: Mechanic?
        var catalogVersion: Int64?

        init(_ kind: StoredEvent.Kind) {
            switch kind {
            case .quote(let from, let quote):
                (quoteId, self.from, to) = (quote.id.rawValue, from?.rawValue, quote.status.rawValue)
            case .quoteReassigned(let from, let quote):
                (quoteId, self.from, to, mechanic) = (
                    quote.id.rawValue, from.name, quote.mechanic?.name, quote.mechanic
                )
            case .mechanicBusy(let mechanic, let quote), .mechanicFree(let mechanic, let quote):
                (quoteId, self.mechanic) = (quote.rawValue, mechanic)
            case .roster(let mechanic, let change):
                self.mechanic = mechanic
                if case .updated(let previous) = change { (from, to) = (previous.name, mechanic.skill.name) }
            case .catalogApplied(let version):
                catalogVersion = version
            case .mechanicDuty(let mechanic, _):
                self.mechanic = mechanic
            }
        }
    }
}
