public import Foundation

/// The states a quote moves through.
///
/// ```
/// submitted ─┬─> pending ──> ready ─┬──────────────> booked ──> completed
///            └──────────────> ready └─> waiting ──> booked
/// booked ──> booked (reassigned), booked ──> waiting (reassigned, no one free)
/// waiting ──> ready (the mechanic it named went off duty or retired)
/// any state but completed ──> cancelled
/// ```
///
/// `waiting` is a ready quote in line for a mechanic: booked, in the transaction that frees
/// one, as soon as a mechanic who can do the work (or the one it named) is free.
public enum QuoteStatus: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    // New states go last: stores keep a state's position in this list.
    case submitted, pending, ready, booked, completed, cancelled, waiting

    /// Whether the state machine allows moving from this state to `next`.
    public func canMove(to next: QuoteStatus) -> Bool {
        switch (self, next) {
        case (.submitted, .pending), (.submitted, .ready), (.pending, .ready), (.ready, .booked),
            (.ready, .waiting), (.waiting, .booked), (.booked, .completed), (.booked, .booked), (.booked, .waiting),
            (.waiting, .ready):
            true
        case (.submitted, .cancelled), (.pending, .cancelled), (.ready, .cancelled), (.booked, .cancelled),
            (.waiting, .cancelled):
            true
        default:
            false
        }
    }

    /// Whether nothing can happen to the quote any more.
    public var isFinal: Bool { self == .completed || self == .cancelled }

    public var description: String { rawValue }
}

/// Who is assigned to a booked quote, and since when.
public struct Assignment: Hashable, Sendable, Codable {
    /// The mechanic doing the work.
    public var mechanic: Mechanic
    /// When the booking was made.
    public var bookedAt: Date

    /// Creates an assignment.
    public init(mechanic: Mechanic, bookedAt: Date) {
        self.mechanic = mechanic
        self.bookedAt = bookedAt
    }
}

/// A quote's state together with exactly the data that state has: a price exists only once
/// ready, a mechanic only once booked, a receipt only once completed.
public enum QuoteStage: Hashable, Sendable, Codable {
    case submitted
    case pending(reasons: [PendingReason])
    // The states with a price are boxed (`indirect`): an enum is as large as its largest
    // case, so every stage would be copied at the size of a receipt, and a copy of a box
    // retains one reference instead of each array and string in its payload.
    indirect case ready(pricing: Pricing)
    indirect case booked(pricing: Pricing, assignment: Assignment)
    indirect case completed(pricing: Pricing, assignment: Assignment, receipt: Receipt)
    case cancelled(from: QuoteStatus, reason: String?)
    /// In line since `since` for `mechanic`, or for anyone able when `nil`.
    indirect case waiting(pricing: Pricing, since: Date, mechanic: Mechanic?)

    /// The stage a newly submitted `request` is priced to: `ready` with the automatic price
    /// when everything needed is there, else `pending` with the reasons. Pure, so it can be
    /// decided before the quote reaches the store.
    public static func priced(_ request: QuoteRequest, currency: Currency) throws(QuoteError) -> QuoteStage {
        let reasons = request.pendingReasons
        return reasons.isEmpty
            ? .ready(pricing: try .automatic(for: request, currency: currency)) : .pending(reasons: reasons)
    }

    /// The state, without its data.
    public var status: QuoteStatus {
        switch self {
        case .submitted: .submitted
        case .pending: .pending
        case .ready: .ready
        case .booked: .booked
        case .completed: .completed
        case .cancelled: .cancelled
        case .waiting: .waiting
        }
    }
}
