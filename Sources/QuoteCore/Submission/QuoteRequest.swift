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
    /// The fields; compared, hashed and coded as the synthesized conformances of the request
    /// did before it had a box, so stored and sent requests read the same.
    @usableFromInline struct Stored: Hashable, Sendable, Codable {
        @usableFromInline var customer: Customer
        @usableFromInline var car: Car
        @usableFromInline var services: [RequestedService]
        @usableFromInline var preferredMechanic: Mechanic?
        @usableFromInline var coupon: Coupon?
    }

    @usableFromInline final class Box: Sendable {
        @usableFromInline let stored: Stored
        init(_ stored: Stored) { self.stored = stored }
    }

    @usableFromInline var box: Box

    public var customer: Customer {
        _read { yield box.stored.customer }
        set { update { $0.customer = newValue } }
    }

    public var car: Car {
        _read { yield box.stored.car }
        set { update { $0.car = newValue } }
    }

    /// The services asked for, in order, without duplicates.
    public var services: [RequestedService] {
        _read { yield box.stored.services }
        set { update { $0.services = newValue } }
    }

    /// The mechanic the customer would like, able to do every listed service.
    public var preferredMechanic: Mechanic? {
        _read { yield box.stored.preferredMechanic }
        set { update { $0.preferredMechanic = newValue } }
    }

    /// The coupon to apply, valid when the request was made.
    public var coupon: Coupon? {
        _read { yield box.stored.coupon }
        set { update { $0.coupon = newValue } }
    }

    /// Creates a request; prefer ``QuoteBuilder``, which validates.
    public init(
        customer: Customer, car: Car, services: [RequestedService], preferredMechanic: Mechanic? = nil,
        coupon: Coupon? = nil
    ) {
        box = Box(
            Stored(
                customer: customer, car: car, services: services, preferredMechanic: preferredMechanic, coupon: coupon))
    }

    /// A new box with `change` made: a box is never written to, so copies never see it.
    private mutating func update(_ change: (inout Stored) -> Void) {
        var stored = box.stored
        change(&stored)
        box = Box(stored)
    }

    /// Equal when every field is: the same box at once, else field by field.
    public static func == (lhs: QuoteRequest, rhs: QuoteRequest) -> Bool {
        lhs.box === rhs.box || lhs.box.stored == rhs.box.stored
    }

    /// Hashes every field, as the synthesized conformance did.
    public func hash(into hasher: inout Hasher) {
        box.stored.hash(into: &hasher)
    }

    /// Decodes the keys the synthesized conformance wrote, so earlier encodings still read.
    public init(from decoder: any Decoder) throws {
        box = Box(try Stored(from: decoder))
    }

    /// Encodes the keys the synthesized conformance wrote.
    public func encode(to encoder: any Encoder) throws {
        try box.stored.encode(to: encoder)
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
