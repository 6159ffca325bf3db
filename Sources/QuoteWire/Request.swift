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
    /// A page of quotes: in one state, of one customer (an email address, or the start of a
    /// name), after a quote id.
    case list(state: String? = nil, customer: String? = nil, after: Int64? = nil, limit: Int? = nil)
    /// What support fills in on a pending quote (a manual price in cents, in the resolution),
    /// or a manual price as text such as `66.25`, for the daemon to read.
    case resolve(quoteId: Int64, Resolution, price: String? = nil)
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
        case .list(let state, let customer, let after, let limit):
            frame.state = state
            frame.customerSearch = customer
            frame.after = after
            frame.limit = limit
        case .resolve(let quote, let resolution, let price):
            frame.quoteId = quote
            frame.year = resolution.year
            frame.trim = resolution.trim
            frame.make = resolution.make
            frame.model = resolution.model
            frame.services = resolution.services
            frame.price = price
            frame.priceCents = resolution.price?.cents
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
