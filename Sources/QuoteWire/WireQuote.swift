public import Foundation
public import QuoteCore

/// A quote as clients see it in replies and events.
public struct WireQuote: Codable, Sendable, Hashable {
    public struct Line: Codable, Sendable, Hashable {
        public var name: String
        /// The catalog price, absent for a service the catalog does not list.
        public var priceCents: Int64?
    }

    public struct WireMechanic: Codable, Sendable, Hashable {
        public var id: Int64
        public var name: String
        public var skill: String

        public init(_ mechanic: Mechanic) {
            id = mechanic.id.rawValue
            name = mechanic.name
            skill = mechanic.skill.name
        }
    }

    public struct WireReceipt: Codable, Sendable, Hashable {
        public var lines: [Line]
        public var subtotalCents: Int64
        public var coupon: String?
        public var discountCents: Int64
        public var totalCents: Int64
        public var total: String
        public var mechanic: WireMechanic
        public var customer: Customer
        public var completedAt: Date
    }

    public var id: Int64
    public var state: String
    public var message: String
    public var customer: Customer
    public var car: Car
    public var services: [Line]
    public var preferredMechanic: String?
    public var coupon: String?
    public var currency: String
    /// The total in cents, once priced.
    public var priceCents: Int64?
    /// The total for people, such as `$66.25`, once priced.
    public var price: String?
    public var discountCents: Int64?
    public var manualPrice: Bool?
    public var mechanic: WireMechanic?
    public var receipt: WireReceipt?
    public var pendingReasons: [PendingReason]?
    public var cancelledFrom: String?
    /// While waiting: the one mechanic the quote waits for, if it named one.
    public var waitingFor: WireMechanic?
    /// While waiting: since when.
    public var waitingSince: Date?
    public var submittedAt: Date
    public var updatedAt: Date
    /// The name of the client certificate it was submitted under; absent when the daemon
    /// authenticated no one.
    public var submittedBy: String?

    /// The wire form of `quote`.
    public init(_ quote: Quote, currency: Currency = .usd) {
        id = quote.id.rawValue
        state = quote.status.rawValue
        message = quote.customerMessage
        customer = quote.request.customer
        car = quote.request.car
        services = quote.request.services.map { Line(name: $0.name, priceCents: $0.listed?.price.cents) }
        preferredMechanic = quote.request.preferredMechanic?.name
        coupon = quote.request.coupon?.code
        self.currency = (quote.price?.currency ?? currency).code
        priceCents = quote.price?.cents
        price = quote.price?.formatted
        discountCents = quote.pricing?.discount.cents
        manualPrice = quote.pricing?.isManual
        mechanic = quote.mechanic.map(WireMechanic.init)
        receipt = quote.receipt.map { receipt in
            WireReceipt(
                lines: receipt.lines.map { Line(name: $0.service, priceCents: $0.price.cents) },
                subtotalCents: receipt.subtotal.cents, coupon: receipt.coupon, discountCents: receipt.discount.cents,
                totalCents: receipt.total.cents, total: receipt.total.formatted,
                mechanic: WireMechanic(receipt.mechanic),
                customer: receipt.customer, completedAt: receipt.completedAt)
        }
        let reasons = quote.pendingReasons
        pendingReasons = reasons.isEmpty ? nil : reasons
        if case .cancelled(let from, _) = quote.stage { cancelledFrom = from.rawValue }
        waitingFor = quote.waitingFor.map(WireMechanic.init)
        waitingSince = quote.waitingSince
        submittedAt = quote.submittedAt
        updatedAt = quote.updatedAt
        submittedBy = quote.submittedBy
    }
}

/// An event as published (second frame after the topic) and as replayed by `events`.
public struct WireEvent: Codable, Sendable, Hashable {
    public var v: Int
    public var seq: Int64
    public var type: String
    public var at: Date
    /// The quote concerned; absent for a change of duty, of the roster or of the catalog.
    public var quoteId: Int64?
    /// The quote's state before (the mechanic's name it left, for `quote.reassigned`; the
    /// mechanic's skill before, for `mechanic.updated`).
    public var from: String?
    /// The quote's state after (the mechanic's name it went to, for `quote.reassigned`,
    /// absent when it went to the wait-list; the mechanic's skill now, for `mechanic.updated`).
    public var to: String?
    /// Who caused the change: a client certificate's name, `quoted` for the daemon's own
    /// work; absent when the daemon authenticated no one.
    public var by: String?
    public var quote: WireQuote?
    public var mechanic: WireQuote.WireMechanic?
    /// The catalog's version a `catalog.applied` put in force.
    public var catalogVersion: Int64?

    /// Creates an event body.
    public init(
        seq: Int64, type: String, at: Date, quoteId: Int64?, from: String? = nil, to: String? = nil,
        by: String? = nil, quote: WireQuote? = nil, mechanic: WireQuote.WireMechanic? = nil,
        catalogVersion: Int64? = nil
    ) {
        self.catalogVersion = catalogVersion
        self.v = 1
        self.seq = seq
        self.type = type
        self.at = at
        self.quoteId = quoteId
        self.from = from
        self.to = to
        self.by = by
        self.quote = quote
        self.mechanic = mechanic
    }
}
