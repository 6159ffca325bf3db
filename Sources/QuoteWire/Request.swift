public import QuoteCore

/// A request of protocol version 1, as a client makes it: one case an operation, with what
/// that operation takes. ``frame(id:)`` gives the frame's fields to encode.
///
/// Values stay as the protocol carries them (a skill, a state or a price as text), so that
/// the daemon is the one to check them, with the same refusals whichever client sent them.
public enum Request: Sendable, Hashable {
    /// A new quote request, with a key that makes a repeat harmless, booked at once with
    /// `book` (waiting in line when no one is free, with `wait`).
    case submit(Submission, idempotencyKey: String? = nil, book: Bool = false, wait: Bool = false)
    case get(quoteId: Int64)
    case list(List)
    case resolve(quoteId: Int64, Resolve)
    case book(quoteId: Int64, mechanic: String? = nil, wait: Bool = false)
    case complete(quoteId: Int64)
    case cancel(quoteId: Int64, reason: String? = nil)
    case reassign(quoteId: Int64, mechanic: String? = nil)
    case waiting(limit: Int? = nil)
    case mechanics(freeOnly: Bool = false, skill: String? = nil)
    case services
    case setDuty(mechanic: String, onDuty: Bool)
    case addMechanic(name: String, skill: String)
    case updateMechanic(mechanic: String, skill: String)
    case retireMechanic(mechanic: String)
    case catalog
    case applyCatalog(CatalogDocument)
    case events(since: Int64, limit: Int? = nil)
    case stats
    case ping

    /// A page of quotes, newest first: in one state, of one customer (an email address, or
    /// the start of a name), older than a quote id.
    public struct List: Sendable, Hashable {
        public var state: String?
        public var customer: String?
        public var after: Int64?
        public var limit: Int?

        /// A page; `nil` leaves a filter out.
        public init(state: String? = nil, customer: String? = nil, after: Int64? = nil, limit: Int? = nil) {
            self.state = state
            self.customer = customer
            self.after = after
            self.limit = limit
        }
    }

    /// What support fills in on a pending quote: the car's missing details, other services,
    /// a manual price (`price` as text like `66.25`, or `priceCents`).
    public struct Resolve: Sendable, Hashable {
        public var year: Int?
        public var trim: String?
        public var make: String?
        public var model: String?
        public var services: [String]?
        public var price: String?
        public var priceCents: Int64?

        /// A resolution; `nil` leaves a field as it is.
        public init(
            year: Int? = nil, trim: String? = nil, make: String? = nil, model: String? = nil,
            services: [String]? = nil, price: String? = nil, priceCents: Int64? = nil
        ) {
            self.year = year
            self.trim = trim
            self.make = make
            self.model = model
            self.services = services
            self.price = price
            self.priceCents = priceCents
        }
    }

    /// The operation the request is.
    public var operation: Operation {
        switch self {
        case .submit: .submit
        case .get: .get
        case .list: .list
        case .resolve: .resolve
        case .book: .book
        case .complete: .complete
        case .cancel: .cancel
        case .reassign: .reassign
        case .waiting: .waiting
        case .mechanics: .mechanics
        case .services: .services
        case .setDuty: .setDuty
        case .addMechanic: .addMechanic
        case .updateMechanic: .updateMechanic
        case .retireMechanic: .retireMechanic
        case .catalog: .catalog
        case .applyCatalog: .applyCatalog
        case .events: .events
        case .stats: .stats
        case .ping: .ping
        }
    }

    /// The frame's fields: `v`, `op`, `id` and what the operation takes (a flag only when set).
    public func frame(id: RequestID? = nil) -> WireRequest {
        var frame = WireRequest(op: operation, id: id)
        switch self {
        case .submit(let submission, let idempotencyKey, let book, let wait):
            frame.customer = submission.customer
            frame.car = submission.car
            frame.services = submission.services
            frame.mechanic = submission.mechanic
            frame.coupon = submission.coupon
            frame.idempotencyKey = idempotencyKey
            frame.book = book ? true : nil
            frame.wait = wait ? true : nil
        case .get(let quote), .complete(let quote):
            frame.quoteId = quote
        case .list(let list):
            frame.state = list.state
            frame.customerSearch = list.customer
            frame.after = list.after
            frame.limit = list.limit
        case .resolve(let quote, let resolve):
            frame.quoteId = quote
            frame.year = resolve.year
            frame.trim = resolve.trim
            frame.make = resolve.make
            frame.model = resolve.model
            frame.services = resolve.services
            frame.price = resolve.price
            frame.priceCents = resolve.priceCents
        case .book(let quote, let mechanic, let wait):
            frame.quoteId = quote
            frame.mechanic = mechanic
            frame.wait = wait ? true : nil
        case .cancel(let quote, let reason):
            frame.quoteId = quote
            frame.reason = reason
        case .reassign(let quote, let mechanic):
            frame.quoteId = quote
            frame.mechanic = mechanic
        case .waiting(let limit):
            frame.limit = limit
        case .mechanics(let freeOnly, let skill):
            frame.free = freeOnly ? true : nil
            frame.skill = skill
        case .setDuty(let mechanic, let onDuty):
            frame.mechanic = mechanic
            frame.onDuty = onDuty
        case .addMechanic(let name, let skill):
            frame.name = name
            frame.skill = skill
        case .updateMechanic(let mechanic, let skill):
            frame.mechanic = mechanic
            frame.skill = skill
        case .retireMechanic(let mechanic):
            frame.mechanic = mechanic
        case .applyCatalog(let document):
            frame.catalog = document
        case .events(let since, let limit):
            frame.since = since
            frame.limit = limit
        case .services, .catalog, .stats, .ping:
            break
        }
        return frame
    }
}
