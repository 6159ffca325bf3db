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
///
/// Its fields live in one immutable box, as a ``Quote``'s do: a request is copied into each
/// state of its quote, each event and each outcome, and a copy then retains one reference
/// instead of each of its strings and arrays. Setting a field builds a new box.
public struct QuoteRequest: Hashable, Sendable, Codable {
    @usableFromInline final class Fields: Sendable {
        @usableFromInline let customer: Customer
        @usableFromInline let car: Car
        @usableFromInline let services: [RequestedService]
        @usableFromInline let preferredMechanic: Mechanic?
        @usableFromInline let coupon: Coupon?

        init(
            customer: Customer, car: Car, services: [RequestedService], preferredMechanic: Mechanic?,
            coupon: Coupon?
        ) {
            self.customer = customer
            self.car = car
            self.services = services
            self.preferredMechanic = preferredMechanic
            self.coupon = coupon
        }
    }

    @usableFromInline var fields: Fields

    public var customer: Customer {
        _read { yield fields.customer }
        set {
            fields = Fields(
                customer: newValue, car: car, services: services, preferredMechanic: preferredMechanic, coupon: coupon)
        }
    }

    public var car: Car {
        _read { yield fields.car }
        set {
            fields = Fields(
                customer: customer, car: newValue, services: services, preferredMechanic: preferredMechanic,
                coupon: coupon)
        }
    }

    /// The services asked for, in order, without duplicates.
    public var services: [RequestedService] {
        _read { yield fields.services }
        set {
            fields = Fields(
                customer: customer, car: car, services: newValue, preferredMechanic: preferredMechanic, coupon: coupon)
        }
    }

    /// The mechanic the customer would like, able to do every listed service.
    public var preferredMechanic: Mechanic? {
        _read { yield fields.preferredMechanic }
        set {
            fields = Fields(
                customer: customer, car: car, services: services, preferredMechanic: newValue, coupon: coupon)
        }
    }

    /// The coupon to apply, valid when the request was made.
    public var coupon: Coupon? {
        _read { yield fields.coupon }
        set {
            fields = Fields(
                customer: customer, car: car, services: services, preferredMechanic: preferredMechanic, coupon: newValue
            )
        }
    }

    /// Creates a request; prefer ``QuoteBuilder``, which validates.
    public init(
        customer: Customer, car: Car, services: [RequestedService], preferredMechanic: Mechanic? = nil,
        coupon: Coupon? = nil
    ) {
        fields = Fields(
            customer: customer, car: car, services: services, preferredMechanic: preferredMechanic, coupon: coupon)
    }

    /// Equal when every field is: the same box at once, else field by field.
    public static func == (lhs: QuoteRequest, rhs: QuoteRequest) -> Bool {
        if lhs.fields === rhs.fields { return true }
        return lhs.customer == rhs.customer && lhs.car == rhs.car && lhs.services == rhs.services
            && lhs.preferredMechanic == rhs.preferredMechanic && lhs.coupon == rhs.coupon
    }

    /// Hashes every field, as the synthesized conformance did.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(customer)
        hasher.combine(car)
        hasher.combine(services)
        hasher.combine(preferredMechanic)
        hasher.combine(coupon)
    }

    private enum CodingKeys: String, CodingKey {
        case customer, car, services, preferredMechanic, coupon
    }

    /// Decodes the keys the synthesized conformance used, so earlier encodings still read.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            customer: try container.decode(Customer.self, forKey: .customer),
            car: try container.decode(Car.self, forKey: .car),
            services: try container.decode([RequestedService].self, forKey: .services),
            preferredMechanic: try container.decodeIfPresent(Mechanic.self, forKey: .preferredMechanic),
            coupon: try container.decodeIfPresent(Coupon.self, forKey: .coupon))
    }

    /// Encodes the keys the synthesized conformance wrote.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(customer, forKey: .customer)
        try container.encode(car, forKey: .car)
        try container.encode(services, forKey: .services)
        try container.encodeIfPresent(preferredMechanic, forKey: .preferredMechanic)
        try container.encodeIfPresent(coupon, forKey: .coupon)
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
