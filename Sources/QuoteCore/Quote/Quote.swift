public import Foundation

/// A quote's identifier, assigned by the store.
public struct QuoteID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The numeric identifier.
    public let rawValue: Int64

    /// Wraps a numeric identifier.
    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    public var description: String { "\(rawValue)" }
    public static func < (lhs: QuoteID, rhs: QuoteID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A customer's quote: the validated request and the stage it has reached.
///
/// A quote is a value. Each transition returns the next quote or throws a ``QuoteError``
/// naming both states; the receiver is never changed, so a refused step changes nothing.
public struct Quote: Hashable, Sendable, Codable, Identifiable {
    public let id: QuoteID
    /// What the customer asked for, as updated by support's resolutions.
    public private(set) var request: QuoteRequest
    /// The state and the data that belongs to it.
    public private(set) var stage: QuoteStage
    /// When the quote was submitted.
    public let submittedAt: Date
    /// When the quote last changed.
    public private(set) var updatedAt: Date

    /// A newly submitted quote.
    public init(id: QuoteID, request: QuoteRequest, submittedAt: Date) {
        self.id = id
        self.request = request
        self.stage = .submitted
        self.submittedAt = submittedAt
        self.updatedAt = submittedAt
    }

    /// Recreates a quote exactly as stored.
    public init(id: QuoteID, request: QuoteRequest, stage: QuoteStage, submittedAt: Date, updatedAt: Date) {
        self.id = id
        self.request = request
        self.stage = stage
        self.submittedAt = submittedAt
        self.updatedAt = updatedAt
    }

    // MARK: What each state has

    /// The current state.
    public var status: QuoteStatus { stage.status }

    /// The pricing, from ready on (and kept when cancelled after).
    public var pricing: Pricing? {
        switch stage {
        case .ready(let pricing), .booked(let pricing, _), .completed(let pricing, _, _): pricing
        default: nil
        }
    }

    /// The total the customer pays, once the quote is ready.
    public var price: Money? { pricing?.total }

    /// The assigned mechanic, once booked.
    public var mechanic: Mechanic? {
        switch stage {
        case .booked(_, let assignment), .completed(_, let assignment, _): assignment.mechanic
        default: nil
        }
    }

    /// The receipt, once completed.
    public var receipt: Receipt? {
        if case .completed(_, _, let receipt) = stage { return receipt }
        return nil
    }

    /// What support must resolve, while pending.
    public var pendingReasons: [PendingReason] {
        if case .pending(let reasons) = stage { return reasons }
        return []
    }

    /// The message for the customer in the current state (the State article's words).
    public var customerMessage: String {
        switch stage {
        case .submitted:
            "Your quote has been submitted and is being processed right now, please wait a few moments"
        case .pending:
            "Your quote is currently pending, we will get back to you with a ready quote soon"
        case .ready(let pricing):
            "Your quote is ready. The total for the services you have requested is: \(pricing.total.formatted)"
        case .booked(_, let assignment):
            "Your appointment has been booked with \(assignment.mechanic.name)."
        case .completed:
            "Thank you for using YourMechanic."
        case .cancelled:
            "Your quote has been cancelled."
        }
    }

    // MARK: Transitions

    /// Prices a submitted quote: `ready` when everything needed is there, else `pending`
    /// with the reasons.
    public func priced(currency: Currency, at now: Date) throws(QuoteError) -> Quote {
        let reasons = request.pendingReasons
        let next: QuoteStage =
            reasons.isEmpty
            ? .ready(pricing: .automatic(for: request, currency: currency)) : .pending(reasons: reasons)
        return try moved(to: next, at: now)
    }

    /// Applies support's resolution to a pending quote, which must leave it priceable: by
    /// filling what was missing, by setting a price, or both.
    public func resolved(with resolution: Resolution, in catalog: Catalog, at now: Date) throws(QuoteError) -> Quote {
        guard status.canMove(to: .ready) && status == .pending else {
            throw .illegalTransition(from: status, to: .ready)
        }
        var updated = self
        updated.request = try resolution.applied(to: request, in: catalog)
        let pricing: Pricing
        if let price = resolution.price {
            guard price.cents >= 0, price.currency == catalog.currency else {
                throw QuoteError(
                    .invalidResolution, "the price must be a non-negative amount in \(catalog.currency)",
                    problems: [Problem(field: "price", message: "\(price) is not allowed")])
            }
            pricing = .manual(price, for: updated.request)
        } else {
            let remaining = updated.request.pendingReasons
            guard remaining.isEmpty else {
                throw QuoteError(
                    .unresolved, "the quote still cannot be priced; fill what is missing or set a price",
                    problems: remaining.map { Problem(field: $0.field, message: $0.message) })
            }
            pricing = .automatic(for: updated.request, currency: catalog.currency)
        }
        return try updated.moved(to: .ready(pricing: pricing), at: now)
    }

    /// Books a ready quote with `mechanic`, who must have the skill its services need.
    /// Whether the mechanic is free is the store's to decide, atomically.
    public func booked(with mechanic: Mechanic, at now: Date) throws(QuoteError) -> Quote {
        guard case .ready(let pricing) = stage else { throw .illegalTransition(from: status, to: .booked) }
        let beyond = mechanic.servicesBeyondSkill(request.listedServices)
        guard beyond.isEmpty else {
            throw QuoteError(
                .cannotPerform, "\(mechanic.name) cannot perform \(beyond.map(\.name).joined(separator: ", "))")
        }
        return try moved(
            to: .booked(pricing: pricing, assignment: Assignment(mechanic: mechanic, bookedAt: now)), at: now)
    }

    /// Completes a booked quote and issues its receipt.
    public func completed(at now: Date) throws(QuoteError) -> Quote {
        guard case .booked(let pricing, let assignment) = stage else {
            throw .illegalTransition(from: status, to: .completed)
        }
        let receipt = Receipt(
            pricing: pricing, mechanic: assignment.mechanic, customer: request.customer, completedAt: now)
        return try moved(to: .completed(pricing: pricing, assignment: assignment, receipt: receipt), at: now)
    }

    /// Cancels the quote from any state but completed (or cancelled).
    public func cancelled(reason: String?, at now: Date) throws(QuoteError) -> Quote {
        try moved(to: .cancelled(from: status, reason: reason), at: now)
    }

    private func moved(to next: QuoteStage, at now: Date) throws(QuoteError) -> Quote {
        guard status.canMove(to: next.status) else { throw .illegalTransition(from: status, to: next.status) }
        var quote = self
        quote.stage = next
        quote.updatedAt = now
        return quote
    }
}
