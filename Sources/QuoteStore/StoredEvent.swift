public import Foundation
public import QuoteCore

/// One entry of the append-only event log: a quote's state change or a mechanic's
/// busy/free change, numbered by a gap-free, strictly increasing sequence.
public struct StoredEvent: Sendable, Hashable {
    /// What kind of change this is.
    public enum Kind: Sendable, Hashable {
        /// A quote moved from `from` (`nil` when it was created) to its current state.
        case quote(from: QuoteStatus?, quote: Quote)
        /// A mechanic was claimed by a quote.
        case mechanicBusy(Mechanic, quote: QuoteID)
        /// A mechanic was released by a quote.
        case mechanicFree(Mechanic, quote: QuoteID)
        /// A mechanic went off duty (no new bookings) or came back on duty.
        case mechanicDuty(Mechanic, onDuty: Bool)
        /// A booked quote moved `from` one mechanic to the one it now holds, or, when no one
        /// was free, into the wait-list (`quote` is then waiting).
        case quoteReassigned(from: Mechanic, quote: Quote)
        /// The roster changed: a mechanic was added, changed skill, or retired.
        case roster(Mechanic, change: RosterChange)
        /// A whole catalog was put in force as one change, numbered `version`.
        case catalogApplied(version: Int64)
    }

    /// How the roster changed for one mechanic.
    public enum RosterChange: Sendable, Hashable {
        /// They joined, on duty and free.
        case added
        /// Their skill changed, from `from`.
        case updated(from: Skill)
        /// They left the roster for good (their history stays).
        case retired
    }

    /// The position in the log: 1, 2, 3..., never reused, with no gaps.
    public var seq: Int64
    /// When the change was committed.
    public var at: Date
    /// The change.
    public var kind: Kind
    /// Who caused it: the name of the client certificate whose request made the change (a
    /// mechanic freed by a completion, and the waiting quote they then take, included), the
    /// daemon's own name for its own work, or `nil` when no one was authenticated.
    public var by: String?

    /// Creates an event.
    public init(seq: Int64, at: Date, kind: Kind, by: String? = nil) {
        self.seq = seq
        self.at = at
        self.kind = kind
        self.by = by
    }

    /// The topic it is published under (``EventType/name``): `quote.<state>`,
    /// `quote.reassigned`, `mechanic.busy`, `mechanic.free`, `mechanic.off_duty`,
    /// `mechanic.on_duty`, `mechanic.added`, `mechanic.updated`, `mechanic.retired` or
    /// `catalog.applied`.
    public var type: String { eventType.name }

    /// What it announces, as a case: the topic it is published under is its name.
    public var eventType: EventType {
        switch kind {
        case .quote(_, let quote):
            switch quote.status {
            case .submitted: .quoteSubmitted
            case .pending: .quotePending
            case .ready: .quoteReady
            case .booked: .quoteBooked
            case .completed: .quoteCompleted
            case .cancelled: .quoteCancelled
            case .waiting: .quoteWaiting
            }
        case .mechanicBusy: .mechanicBusy
        case .mechanicFree: .mechanicFree
        case .mechanicDuty(_, let onDuty): onDuty ? .mechanicOnDuty : .mechanicOffDuty
        case .quoteReassigned: .quoteReassigned
        case .roster(_, .added): .mechanicAdded
        case .roster(_, .updated): .mechanicUpdated
        case .roster(_, .retired): .mechanicRetired
        case .catalogApplied: .catalogApplied
        }
    }

    /// The quote the event concerns; `nil` for a change of duty, of the roster or of the catalog.
    public var quoteID: QuoteID? {
        switch kind {
        case .quote(_, let quote), .quoteReassigned(_, let quote): quote.id
        case .mechanicBusy(_, let id), .mechanicFree(_, let id): id
        case .mechanicDuty, .roster, .catalogApplied: nil
        }
    }

    /// Whether the event changed the catalog: the roster or the whole of it.
    public var changesCatalog: Bool {
        switch kind {
        case .roster, .catalogApplied: true
        default: false
        }
    }

    /// The quote in the state the event left it, for a quote's event.
    public var quote: Quote? {
        switch kind {
        case .quote(_, let quote), .quoteReassigned(_, let quote): quote
        case .mechanicBusy, .mechanicFree, .mechanicDuty, .roster, .catalogApplied: nil
        }
    }
}
