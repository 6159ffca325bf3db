/// A service on a request: one from the catalog, or a name the catalog does not know (which
/// support must sort out before the quote can be priced).
public struct RequestedService: Hashable, Sendable, Codable {
    /// The name as the customer gave it, or the catalog's spelling when listed.
    public var name: String
    /// The catalog's service, when the name is in the catalog.
    public var listed: Service?

    /// Creates a requested service.
    public init(name: String, listed: Service?) {
        self.name = name
        self.listed = listed
    }
}

/// A validated quote request: everything required is present and consistent with the
/// catalog. Only ``QuoteBuilder`` makes one from client input.
public struct QuoteRequest: Hashable, Sendable, Codable {
    public var customer: Customer
    public var car: Car
    /// The services asked for, in order, without duplicates.
    public var services: [RequestedService]
    /// The mechanic the customer would like, able to do every listed service.
    public var preferredMechanic: Mechanic?
    /// The coupon to apply, valid when the request was made.
    public var coupon: Coupon?

    /// Creates a request; prefer ``QuoteBuilder``, which validates.
    public init(
        customer: Customer, car: Car, services: [RequestedService], preferredMechanic: Mechanic? = nil,
        coupon: Coupon? = nil
    ) {
        self.customer = customer
        self.car = car
        self.services = services
        self.preferredMechanic = preferredMechanic
        self.coupon = coupon
    }

    /// The catalog services among those requested.
    public var listedServices: [Service] {
        services.compactMap(\.listed)
    }

    /// The least skill a mechanic needs for the listed services (junior when none is listed).
    public var requiredSkill: Skill {
        listedServices.requiredSkill ?? .junior
    }

    /// What keeps the request from being priced automatically; empty when nothing does.
    public var pendingReasons: [PendingReason] {
        var reasons: [PendingReason] = []
        if car.year == nil { reasons.append(.missing("car.year")) }
        if (car.trim ?? "").trimmingPrefixAndSuffixSpaces().isEmpty { reasons.append(.missing("car.trim")) }
        for (index, service) in services.enumerated() where service.listed == nil {
            reasons.append(.unlistedService(service.name, index: index))
        }
        return reasons
    }
}

/// Why a quote could not be priced automatically, for support to resolve.
public struct PendingReason: Hashable, Sendable, Codable, CustomStringConvertible {
    /// `missing` (a field is absent) or `unlisted_service` (a service the catalog lacks).
    public var code: String
    /// The field concerned: `car.trim`, `services[2]`.
    public var field: String
    /// The reason in words: `car.trim missing`, `service "strange noise" not in catalog`.
    public var message: String

    /// Creates a reason.
    public init(code: String, field: String, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    /// A field needed for pricing is absent.
    public static func missing(_ field: String) -> PendingReason {
        PendingReason(code: "missing", field: field, message: "\(field) missing")
    }

    /// A service the catalog does not list.
    public static func unlistedService(_ name: String, index: Int) -> PendingReason {
        PendingReason(
            code: "unlisted_service", field: "services[\(index)]",
            message: "service \"\(QuoteLimits.echo(name))\" not in catalog")
    }

    public var description: String { message }
}
