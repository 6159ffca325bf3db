/// A quote request as it arrives, before validation: every field may be missing or wrong.
///
/// This is what clients send; ``QuoteBuilder`` turns it into a valid ``QuoteRequest`` or
/// reports every problem with it.
public struct Submission: Hashable, Sendable, Codable {
    /// The customer as given.
    public struct CustomerInput: Hashable, Sendable, Codable {
        public var name: String?
        public var email: String?
        public var address: String?

        public init(name: String? = nil, email: String? = nil, address: String? = nil) {
            self.name = name
            self.email = email
            self.address = address
        }
    }

    /// The car as given.
    public struct CarInput: Hashable, Sendable, Codable {
        public var make: String?
        public var model: String?
        public var year: Int?
        public var trim: String?

        public init(make: String? = nil, model: String? = nil, year: Int? = nil, trim: String? = nil) {
            self.make = make
            self.model = model
            self.year = year
            self.trim = trim
        }

        enum CodingKeys: String, CodingKey {
            case make, model, year, trim
        }

        /// Decodes the car, reading `year` as any whole number (`2012.0` too).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            make = try container.decodeIfPresent(String.self, forKey: .make)
            model = try container.decodeIfPresent(String.self, forKey: .model)
            year = try container.decodeWholeNumberIfPresent(forKey: .year).map { Int($0) }
            trim = try container.decodeIfPresent(String.self, forKey: .trim)
        }
    }

    public var customer: CustomerInput?
    public var car: CarInput?
    /// Service names, as in the catalog (case does not matter).
    public var services: [String]?
    /// The name of the mechanic the customer would like, if any.
    public var mechanic: String?
    /// A coupon code, if any.
    public var coupon: String?

    /// Creates a submission.
    public init(
        customer: CustomerInput? = nil, car: CarInput? = nil, services: [String]? = nil, mechanic: String? = nil,
        coupon: String? = nil
    ) {
        self.customer = customer
        self.car = car
        self.services = services
        self.mechanic = mechanic
        self.coupon = coupon
    }
}

extension Submission {
    /// The submission that builds `request` again: its names and codes, to check it against
    /// another catalog.
    public init(_ request: QuoteRequest) {
        self.init(
            customer: CustomerInput(
                name: request.customer.name, email: request.customer.email, address: request.customer.address),
            car: CarInput(
                make: request.car.make, model: request.car.model, year: request.car.year, trim: request.car.trim),
            services: request.services.map(\.name), mechanic: request.preferredMechanic?.name,
            coupon: request.coupon?.code)
    }
}
