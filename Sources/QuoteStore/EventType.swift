/// What an event announces, one case per topic it is published under (``name``). The cases
/// are numbered from 0 in this order, so that a table of anything per type is an array.
public enum EventType: Int, CaseIterable, Sendable {
    case quoteSubmitted, quotePending, quoteReady, quoteBooked, quoteCompleted, quoteCancelled, quoteWaiting
    case quoteReassigned
    case mechanicBusy, mechanicFree, mechanicOnDuty, mechanicOffDuty
    case mechanicAdded, mechanicUpdated, mechanicRetired
    case catalogApplied

    /// The topic: `quote.<state>`, `quote.reassigned`, `mechanic.busy`, `mechanic.free`,
    /// `mechanic.on_duty`, `mechanic.off_duty`, `mechanic.added`, `mechanic.updated`,
    /// `mechanic.retired` or `catalog.applied`.
    ///
    /// Literals, not `"quote.\(state)"`: it is asked for every event stored or published.
    public var name: String {
        switch self {
        case .quoteSubmitted: "quote.submitted"
        case .quotePending: "quote.pending"
        case .quoteReady: "quote.ready"
        case .quoteBooked: "quote.booked"
        case .quoteCompleted: "quote.completed"
        case .quoteCancelled: "quote.cancelled"
        case .quoteWaiting: "quote.waiting"
        case .quoteReassigned: "quote.reassigned"
        case .mechanicBusy: "mechanic.busy"
        case .mechanicFree: "mechanic.free"
        case .mechanicOnDuty: "mechanic.on_duty"
        case .mechanicOffDuty: "mechanic.off_duty"
        case .mechanicAdded: "mechanic.added"
        case .mechanicUpdated: "mechanic.updated"
        case .mechanicRetired: "mechanic.retired"
        case .catalogApplied: "catalog.applied"
        }
    }
}
