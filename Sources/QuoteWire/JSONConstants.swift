import QuoteCore
import QuoteStore

extension QuoteStatus {
    /// The state as a JSON string, quotes included: a constant a writer copies whole, never
    /// scanned for escapes (every quote and quote event shows a state).
    var jsonString: StaticString {
        switch self {
        case .submitted: "\"submitted\""
        case .pending: "\"pending\""
        case .ready: "\"ready\""
        case .booked: "\"booked\""
        case .completed: "\"completed\""
        case .cancelled: "\"cancelled\""
        case .waiting: "\"waiting\""
        }
    }
}

extension EventType {
    /// The type's `EventType.name` as a JSON string, quotes included, as
    /// `QuoteStatus.jsonString` is.
    var jsonString: StaticString {
        switch self {
        case .quoteSubmitted: "\"quote.submitted\""
        case .quotePending: "\"quote.pending\""
        case .quoteReady: "\"quote.ready\""
        case .quoteBooked: "\"quote.booked\""
        case .quoteCompleted: "\"quote.completed\""
        case .quoteCancelled: "\"quote.cancelled\""
        case .quoteWaiting: "\"quote.waiting\""
        case .quoteReassigned: "\"quote.reassigned\""
        case .mechanicBusy: "\"mechanic.busy\""
        case .mechanicFree: "\"mechanic.free\""
        case .mechanicOnDuty: "\"mechanic.on_duty\""
        case .mechanicOffDuty: "\"mechanic.off_duty\""
        case .mechanicAdded: "\"mechanic.added\""
        case .mechanicUpdated: "\"mechanic.updated\""
        case .mechanicRetired: "\"mechanic.retired\""
        case .catalogApplied: "\"catalog.applied\""
        }
    }
}

/// A string value a writer writes: one of the protocol's constants, already JSON
/// (`QuoteStatus.jsonString`), or text, escaped as it needs.
enum JSONStringValue {
    case constant(StaticString)
    case text(String)
}
