public import Foundation

/// A quote's identifier, assigned by the store.
public struct QuoteID: NumericIdentifier {
    public let rawValue: Int64

    public init(_ rawValue: Int64) { self.rawValue = rawValue }
}

/// A customer's quote: the validated request and the stage it has reached.
///
/// A quote is a value. Each transition returns the next quote or throws a ``QuoteError``
/// naming both states; the receiver is never changed, so a refused step changes nothing.
///
/// Its fields live in one immutable box, so copying a quote (into an event, an outcome, a
/// reply) retains one reference instead of each of its dozen strings and arrays. A
/// transition builds a new box; nothing ever writes to one.
public struct Quote: Hashable, Sendable, Codable, Identifiable {
    @usableFromInline final class Fields: Sendable {
        @usableFromInline let id: QuoteID
        @usableFromInline let request: QuoteRequest
        @usableFromInline let stage: QuoteStage
        @usableFromInline let submittedAt: Date
        @usableFromInline let updatedAt: Date
        @usableFromInline let submittedBy: String?
        @usableFromInline let submissionDigest: SubmissionDigest?
        @usableFromInline let notice: String?

        init(
            id: QuoteID, request: QuoteRequest, stage: QuoteStage, submittedAt: Date, updatedAt: Date,
            submittedBy: String?, submissionDigest: SubmissionDigest?, notice: String?
        ) {
            self.notice = notice
            self.id = id
            self.request = request
            self.stage = stage
            self.submittedAt = submittedAt
            self.updatedAt = updatedAt
            self.submittedBy = submittedBy
            self.submissionDigest = submissionDigest
        }
    }

    @usableFromInline let fields: Fields

    // Inlinable, so that `quote.request.customer` reads through the box into the one field
    // rather than copying (and retaining) the whole request first.

    /// The store's identifier.
    @inlinable public var id: QuoteID { fields.id }
    /// What the customer asked for, as updated by support's resolutions.
    ///
    /// Lent, not copied: a copy of a request retains each of its strings and arrays, and
    /// comparing or writing a quote reads its request field by field.
    @inlinable public var request: QuoteRequest {
        _read { yield fields.request }
    }
    /// The state and the data that belongs to it; lent, as ``request`` is, not copied.
    @inlinable public var stage: QuoteStage {
        _read { yield fields.stage }
    }
    /// When the quote was submitted.
    @inlinable public var submittedAt: Date { fields.submittedAt }
    /// When the quote last changed.
    @inlinable public var updatedAt: Date { fields.updatedAt }
    /// Who submitted it: the name of the client certificate the request came under, or
    /// `nil` when the daemon authenticated no one. The audit trail, and what a `client`
    /// role's access to its own quotes is checked against.
    @inlinable public var submittedBy: String? { fields.submittedBy }
    /// The fingerprint of the submission that created the quote, as the client sent it: a
    /// retry under the same idempotency key must match it. `nil` for quotes stored before it
    /// was kept.
    @inlinable public var submissionDigest: SubmissionDigest? { fields.submissionDigest }
    /// Why the quote is in its state when it did not get there by a request about it: a
    /// quote that left the line of a mechanic who went off duty or retired. Dropped by the
    /// next transition.
    @inlinable public var notice: String? { fields.notice }

    /// A newly submitted quote.
    public init(
        id: QuoteID, request: QuoteRequest, submittedAt: Date, submittedBy: String? = nil,
        submissionDigest: SubmissionDigest? = nil
    ) {
        self.init(
            id: id, request: request, stage: .submitted, submittedAt: submittedAt, updatedAt: submittedAt,
            submittedBy: submittedBy, submissionDigest: submissionDigest)
    }

    /// Recreates a quote exactly as stored.
    public init(
        id: QuoteID, request: QuoteRequest, stage: QuoteStage, submittedAt: Date, updatedAt: Date,
        submittedBy: String? = nil, submissionDigest: SubmissionDigest? = nil, notice: String? = nil
    ) {
        fields = Fields(
            id: id, request: request, stage: stage, submittedAt: submittedAt, updatedAt: updatedAt,
            submittedBy: submittedBy, submissionDigest: submissionDigest, notice: notice)
    }

    /// Whether `other` has the same request: read in place, neither copied.
    public func hasSameRequest(as other: Quote) -> Bool {
        fields === other.fields || fields.request == other.fields.request
    }

    /// Equal when every field is: the same box at once, else field by field (the cheapest
    /// and likeliest to differ first).
    public static func == (lhs: Quote, rhs: Quote) -> Bool {
        if lhs.fields === rhs.fields { return true }
        return lhs.id == rhs.id && lhs.stage == rhs.stage && lhs.updatedAt == rhs.updatedAt
            && lhs.submittedAt == rhs.submittedAt && lhs.submittedBy == rhs.submittedBy && lhs.request == rhs.request
            && lhs.submissionDigest == rhs.submissionDigest && lhs.notice == rhs.notice
    }

    /// Hashes every field, as the synthesized conformance did.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(request)
        hasher.combine(stage)
        hasher.combine(submittedAt)
        hasher.combine(updatedAt)
        hasher.combine(submittedBy)
        hasher.combine(submissionDigest)
        hasher.combine(notice)
    }

    private enum CodingKeys: String, CodingKey {
        case id, request, stage, submittedAt, updatedAt, submittedBy, submissionDigest, notice
    }

    /// Decodes the keys the synthesized conformance used, so earlier encodings still read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(QuoteID.self, forKey: .id),
            request: try container.decode(QuoteRequest.self, forKey: .request),
            stage: try container.decode(QuoteStage.self, forKey: .stage),
            submittedAt: try container.decode(Date.self, forKey: .submittedAt),
            updatedAt: try container.decode(Date.self, forKey: .updatedAt),
            submittedBy: try container.decodeIfPresent(String.self, forKey: .submittedBy),
            submissionDigest: try container.decodeIfPresent(SubmissionDigest.self, forKey: .submissionDigest),
            notice: try container.decodeIfPresent(String.self, forKey: .notice))
    }

    /// Encodes the keys the synthesized conformance used.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(request, forKey: .request)
        try container.encode(stage, forKey: .stage)
        try container.encode(submittedAt, forKey: .submittedAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encodeIfPresent(submittedBy, forKey: .submittedBy)
        try container.encodeIfPresent(submissionDigest, forKey: .submissionDigest)
        try container.encodeIfPresent(notice, forKey: .notice)
    }

    // MARK: What each state has

    /// The current state.
    public var status: QuoteStatus { stage.status }

    /// The pricing, from ready on (and kept when cancelled after).
    public var pricing: Pricing? {
        switch stage {
        case .ready(let pricing), .booked(let pricing, _), .completed(let pricing, _, _), .waiting(let pricing, _, _):
            pricing
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

    /// Since when the quote has waited for a mechanic, while waiting.
    public var waitingSince: Date? {
        if case .waiting(_, let since, _) = stage { return since }
        return nil
    }

    /// The one mechanic a waiting quote waits for; `nil` when anyone able will do, or when
    /// not waiting.
    public var waitingFor: Mechanic? {
        if case .waiting(_, _, let mechanic) = stage { return mechanic }
        return nil
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

    // MARK: Transitions

    /// Prices a submitted quote: `ready` when everything needed is there, else `pending`
    /// with the reasons.
    public func priced(currency: Currency, at now: Date) throws(QuoteError) -> Quote {
        try moved(to: try .priced(request, currency: currency), at: now)
    }

    /// Applies support's resolution to a pending quote, which must leave it priceable: by
    /// filling what was missing, by setting a price, or both.
    public func resolved(with resolution: Resolution, in catalog: Catalog, at now: Date) throws(QuoteError) -> Quote {
        guard status.canMove(to: .ready) && status == .pending else {
            throw .illegalTransition(from: status, to: .ready)
        }
        let updated = Quote(
            id: id, request: try resolution.applied(to: request, in: catalog), stage: stage, submittedAt: submittedAt,
            updatedAt: updatedAt, submittedBy: submittedBy, submissionDigest: submissionDigest)
        let pricing: Pricing
        if let price = resolution.price {
            guard (0...Money.maximumCents).contains(price.cents), price.currency == catalog.currency else {
                throw QuoteError(
                    .invalidResolution,
                    "the price must be an amount from 0 to \(Money(cents: Money.maximumCents, currency: catalog.currency)) in \(catalog.currency)",
                    problems: [Problem(field: "price", message: "\(price) is not allowed")])
            }
            pricing = try .manual(price, for: updated.request)
        } else {
            let remaining = updated.request.pendingReasons
            guard remaining.isEmpty else {
                throw QuoteError(
                    .unresolved, "the quote still cannot be priced; fill what is missing or set a price",
                    problems: remaining.map { Problem(field: $0.field, message: $0.message) })
            }
            pricing = try .automatic(for: updated.request, currency: catalog.currency)
        }
        return try updated.moved(to: .ready(pricing: pricing), at: now)
    }

    /// Books a ready or waiting quote with `mechanic`, who must have the skill its services
    /// need (and be the one it waits for, if it named one). Whether the mechanic is free is
    /// the store's to decide, atomically.
    public func booked(with mechanic: Mechanic, at now: Date) throws(QuoteError) -> Quote {
        let pricing: Pricing
        switch stage {
        case .ready(let ready): pricing = ready
        case .waiting(let waiting, _, let named):
            guard named == nil || named?.id == mechanic.id else {
                throw QuoteError(.mechanicBusy, "this quote waits for \(named!.name), not \(mechanic.name)")
            }
            pricing = waiting
        default: throw .illegalTransition(from: status, to: .booked)
        }
        try checkAble(mechanic)
        return try moved(
            to: .booked(pricing: pricing, assignment: Assignment(mechanic: mechanic, bookedAt: now)), at: now)
    }

    /// Puts a ready quote in line for `mechanic`, or for anyone able when `nil`, who must have
    /// the skill its services need.
    public func waiting(for mechanic: Mechanic?, at now: Date) throws(QuoteError) -> Quote {
        guard case .ready(let pricing) = stage else { throw .illegalTransition(from: status, to: .waiting) }
        if let mechanic { try checkAble(mechanic) }
        return try moved(to: .waiting(pricing: pricing, since: now, mechanic: mechanic), at: now)
    }

    /// Takes a waiting quote out of line, back to ready, saying why (`notice`): the mechanic
    /// it named will not come (off duty, retired), and another booking is the customer's to
    /// choose.
    public func unqueued(notice: String, at now: Date) throws(QuoteError) -> Quote {
        guard case .waiting(let pricing, _, _) = stage else { throw .illegalTransition(from: status, to: .ready) }
        let ready = try moved(to: .ready(pricing: pricing), at: now)
        return Quote(
            id: id, request: request, stage: ready.stage, submittedAt: submittedAt, updatedAt: now,
            submittedBy: submittedBy, submissionDigest: submissionDigest, notice: notice)
    }

    /// Moves a booked quote to `mechanic`, who must have the skill its services need; the
    /// price stays. Whether they are free is the store's to decide, atomically.
    public func reassigned(to mechanic: Mechanic, at now: Date) throws(QuoteError) -> Quote {
        guard case .booked(let pricing, let assignment) = stage else {
            throw .illegalTransition(from: status, to: .booked)
        }
        guard assignment.mechanic.id != mechanic.id else {
            throw QuoteError(.mechanicBusy, "the quote is booked with \(mechanic.name) already")
        }
        try checkAble(mechanic)
        return try moved(
            to: .booked(pricing: pricing, assignment: Assignment(mechanic: mechanic, bookedAt: now)), at: now)
    }

    /// Takes a booked quote off its mechanic and puts it in line for anyone able: a
    /// reassignment that found no one free.
    public func requeued(at now: Date) throws(QuoteError) -> Quote {
        guard case .booked(let pricing, _) = stage else { throw .illegalTransition(from: status, to: .waiting) }
        return try moved(to: .waiting(pricing: pricing, since: now, mechanic: nil), at: now)
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

    /// Refuses `mechanic` when the services need more skill than they have (`cannot_perform`).
    private func checkAble(_ mechanic: Mechanic) throws(QuoteError) {
        let beyond = mechanic.servicesBeyondSkill(request.listedServices)
        guard beyond.isEmpty else {
            throw QuoteError(
                .cannotPerform, "\(mechanic.name) cannot perform \(beyond.map(\.name).joined(separator: ", "))")
        }
    }

    private func moved(to next: QuoteStage, at now: Date) throws(QuoteError) -> Quote {
        guard status.canMove(to: next.status) else { throw .illegalTransition(from: status, to: next.status) }
        return Quote(
            id: id, request: request, stage: next, submittedAt: submittedAt, updatedAt: now, submittedBy: submittedBy,
            submissionDigest: submissionDigest)
    }
}
