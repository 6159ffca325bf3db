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

    /// The quote a request on one quote is about.
    public var quoteId: Int64? {
        switch self {
        case .get(let quote), .complete(let quote), .resolve(let quote, _, _), .book(let quote, _, _),
            .cancel(let quote, _), .reassign(let quote, _):
            quote
        case .submit, .list, .waiting, .mechanics, .services, .setDuty, .addMechanic, .updateMechanic,
            .retireMechanic, .catalog, .applyCatalog, .events, .stats, .ping:
            nil
        }
    }

    /// The mechanic a request names, by name: the one it asks for (a submission's, a
    /// booking's, a reassignment's), or the one of the roster it changes (not a new one:
    /// `addMechanic` sends its name as `name`).
    public var mechanic: String? {
        switch self {
        case .submit(let submission, _, _, _): submission.mechanic
        case .book(_, let mechanic, _), .reassign(_, let mechanic): mechanic
        case .setDuty(let mechanic, _), .updateMechanic(let mechanic, _), .retireMechanic(let mechanic): mechanic
        case .get, .list, .resolve, .complete, .cancel, .waiting, .mechanics, .services, .addMechanic, .catalog,
            .applyCatalog, .events, .stats, .ping:
            nil
        }
    }

    /// The frame's fields: `v`, `op`, `id` and what the operation takes (a flag only when set).
    public func frame(id: RequestID? = nil) -> WireRequest {
        var frame = WireRequest(op: operation, id: id)
        frame.quoteId = quoteId
        frame.mechanic = mechanic
        switch self {
        case .submit(let submission, let idempotencyKey, let book, let wait):
            frame.customer = submission.customer
            frame.car = submission.car
            frame.services = submission.services
            frame.coupon = submission.coupon
            frame.idempotencyKey = idempotencyKey
            frame.book = book ? true : nil
            frame.wait = wait ? true : nil
        case .list(let state, let customer, let after, let limit):
            frame.state = state
            frame.customerSearch = customer
            frame.after = after
            frame.limit = limit
        case .resolve(_, let resolution, let price):
            frame.year = resolution.car?.year
            frame.trim = resolution.car?.trim
            frame.make = resolution.car?.make
            frame.model = resolution.car?.model
            frame.services = resolution.services
            frame.price = price
            frame.priceCents = resolution.price?.cents
        case .book(_, _, let wait):
            frame.wait = wait ? true : nil
        case .cancel(_, let reason):
            frame.reason = reason
        case .waiting(let limit):
            frame.limit = limit
        case .mechanics(let freeOnly, let skill):
            frame.free = freeOnly ? true : nil
            frame.skill = skill
        case .setDuty(_, let onDuty):
            frame.onDuty = onDuty
        case .addMechanic(let name, let skill):
            frame.name = name
            frame.skill = skill
        case .updateMechanic(_, let skill):
            frame.skill = skill
        case .applyCatalog(let document):
            frame.catalog = document
        case .events(let since, let limit):
            frame.since = since
            frame.limit = limit
        case .get, .complete, .reassign, .retireMechanic, .services, .catalog, .stats, .ping:
            break
        }
        return frame
    }
}
