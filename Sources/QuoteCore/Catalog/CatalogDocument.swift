import Foundation

/// A catalog as written in a data file (YAML or JSON, like the daemon's configuration).
///
/// Everything is kept as written, text included, so that ``catalog()`` can report each
/// mistake at its exact path: an unknown skill, a price that is not an amount, a duplicate.
///
/// ```yaml
/// currency: USD
/// services:
///   - { name: Oil Change, minimumSkill: junior, price: "35.00" }
/// mechanics:
///   - { id: 1, name: Steve Brimington, skill: junior }
/// coupons:
///   - { code: WELCOME10, percentOff: 10, expires: "2030-01-01T00:00:00Z" }
/// ```
public struct CatalogDocument: Codable, Sendable, Hashable {
    /// A service entry: `price` is a decimal amount such as `"89.00"`, or give `priceCents`.
    public struct ServiceEntry: Codable, Sendable, Hashable {
        public var name: String
        public var minimumSkill: String
        public var price: String?
        public var priceCents: Int64?

        public init(name: String, minimumSkill: String, price: String? = nil, priceCents: Int64? = nil) {
            self.name = name
            self.minimumSkill = minimumSkill
            self.price = price
            self.priceCents = priceCents
        }
    }

    /// A mechanic entry, with a stable positive `id`.
    public struct MechanicEntry: Codable, Sendable, Hashable {
        public var id: Int64
        public var name: String
        public var skill: String

        public init(id: Int64, name: String, skill: String) {
            self.id = id
            self.name = name
            self.skill = skill
        }
    }

    /// A coupon entry: exactly one of `percentOff` and `amountOff` (a decimal amount);
    /// `expires` is an RFC 3339 time.
    public struct CouponEntry: Codable, Sendable, Hashable {
        public var code: String
        public var percentOff: Int?
        public var amountOff: String?
        public var expires: String?

        public init(code: String, percentOff: Int? = nil, amountOff: String? = nil, expires: String? = nil) {
            self.code = code
            self.percentOff = percentOff
            self.amountOff = amountOff
            self.expires = expires
        }
    }

    /// The ISO 4217 code of every price; `USD` when absent.
    public var currency: String?
    public var services: [ServiceEntry]
    public var mechanics: [MechanicEntry]
    public var coupons: [CouponEntry]?

    /// Creates a document.
    public init(
        currency: String? = nil, services: [ServiceEntry], mechanics: [MechanicEntry], coupons: [CouponEntry]? = nil
    ) {
        self.currency = currency
        self.services = services
        self.mechanics = mechanics
        self.coupons = coupons
    }

    /// Validates the document and builds the catalog, reporting every problem at once.
    public func catalog() throws(CatalogError) -> Catalog {
        var problems: [Problem] = []
        let currency = Currency(self.currency ?? "USD")
        if currency.code.utf8.count != 3 || !currency.code.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) {
            problems.append(Problem(field: "currency", message: "must be a three-letter ISO 4217 code"))
        }

        func skill(_ name: String, at field: String) -> Skill? {
            guard let skill = Skill(name: name) else {
                problems.append(
                    Problem(
                        field: field,
                        message: "unknown skill \"\(QuoteLimits.echo(name))\" (junior, apprentice, experienced, master)"
                    ))
                return nil
            }
            return skill
        }

        var services: [Service] = []
        var positions: (services: [Int], mechanics: [Int], coupons: [Int]) = ([], [], [])
        for (index, entry) in self.services.enumerated() {
            let field = "services[\(index)]"
            let minimum = skill(entry.minimumSkill, at: "\(field).minimumSkill")
            var price: Money?
            switch (entry.price, entry.priceCents) {
            case (let text?, nil):
                price = Money(parsing: text, currency: currency)
                if price == nil {
                    problems.append(
                        Problem(
                            field: "\(field).price",
                            message: "\"\(QuoteLimits.echo(text))\" is not an amount like 89.00"))
                }
            case (nil, let cents?):
                price = Money(cents: cents, currency: currency)
            case (nil, nil):
                problems.append(Problem(field: "\(field).price", message: "is missing"))
            case (_?, _?):
                problems.append(Problem(field: "\(field).price", message: "give price or priceCents, not both"))
            }
            if let minimum, let price {
                services.append(Service(name: entry.name, minimumSkill: minimum, price: price))
                positions.services.append(index)
            }
        }

        var mechanics: [Mechanic] = []
        for (index, entry) in self.mechanics.enumerated() {
            if let level = skill(entry.skill, at: "mechanics[\(index)].skill") {
                mechanics.append(Mechanic(id: MechanicID(entry.id), name: entry.name, skill: level))
                positions.mechanics.append(index)
            }
        }

        var coupons: [Coupon] = []
        for (index, entry) in (self.coupons ?? []).enumerated() {
            let field = "coupons[\(index)]"
            var expiry: Date?
            if let text = entry.expires {
                expiry = try? Date(text, strategy: .iso8601)
                if expiry == nil {
                    problems.append(
                        Problem(
                            field: "\(field).expires",
                            message: "\"\(QuoteLimits.echo(text))\" is not a time like 2030-01-01T00:00:00Z"))
                }
            }
            switch (entry.percentOff, entry.amountOff) {
            case (let percent?, nil):
                coupons.append(Coupon(code: entry.code, discount: .percent(percent), expiresAt: expiry))
                positions.coupons.append(index)
            case (nil, let text?):
                if let amount = Money(parsing: text, currency: currency) {
                    coupons.append(Coupon(code: entry.code, discount: .amount(amount), expiresAt: expiry))
                    positions.coupons.append(index)
                } else {
                    problems.append(
                        Problem(
                            field: "\(field).amountOff",
                            message: "\"\(QuoteLimits.echo(text))\" is not an amount like 5.00"))
                }
            default:
                problems.append(Problem(field: field, message: "give exactly one of percentOff and amountOff"))
            }
        }

        var catalog: Catalog?
        do {
            catalog = try Catalog(
                currency: currency, services: services, mechanics: mechanics, coupons: coupons, positions: positions)
        } catch {
            problems += error.problems
        }
        guard problems.isEmpty, let catalog else { throw CatalogError(problems: problems) }
        return catalog
    }
}

extension CatalogDocument {
    /// The articles' data: nine mechanics and eleven services from the Builder article, Joe
    /// Murphy (master) from the State article, and the coupon `WELCOME10`, 10% off.
    public static let standard = CatalogDocument(
        currency: "USD",
        services: [
            ServiceEntry(name: "Brake Inspection", minimumSkill: "junior", price: "15.00"),
            ServiceEntry(name: "Battery Inspection", minimumSkill: "junior", price: "17.00"),
            ServiceEntry(name: "Oil Change", minimumSkill: "junior", price: "35.00"),
            ServiceEntry(name: "Door Latch Replacement", minimumSkill: "junior", price: "33.00"),
            ServiceEntry(name: "Lubricate Trunk", minimumSkill: "junior", price: "19.00"),
            ServiceEntry(name: "Air Filter Replacement", minimumSkill: "junior", price: "39.00"),
            ServiceEntry(name: "Brake Motor Replacement", minimumSkill: "apprentice", price: "115.00"),
            ServiceEntry(name: "Brake Pad Replacement", minimumSkill: "apprentice", price: "89.00"),
            ServiceEntry(name: "Battery Replacement", minimumSkill: "apprentice", price: "110.00"),
            ServiceEntry(name: "Timing Belt Replacement", minimumSkill: "master", price: "250.00"),
            ServiceEntry(name: "Power Steering Replacement", minimumSkill: "master", price: "270.00"),
        ],
        mechanics: [
            MechanicEntry(id: 1, name: "Steve Brimington", skill: "junior"),
            MechanicEntry(id: 2, name: "Mike Fulton", skill: "junior"),
            MechanicEntry(id: 3, name: "Ali Bellevue", skill: "junior"),
            MechanicEntry(id: 4, name: "Dick Duchess", skill: "apprentice"),
            MechanicEntry(id: 5, name: "Shane Inglewood", skill: "apprentice"),
            MechanicEntry(id: 6, name: "Trevor Matters", skill: "apprentice"),
            MechanicEntry(id: 7, name: "Moris King", skill: "experienced"),
            MechanicEntry(id: 8, name: "Nick Main", skill: "experienced"),
            MechanicEntry(id: 9, name: "Zane Marine", skill: "master"),
            MechanicEntry(id: 10, name: "Joe Murphy", skill: "master"),
        ],
        coupons: [CouponEntry(code: "WELCOME10", percentOff: 10)]
    )
}

extension Catalog {
    /// The default catalog: ``CatalogDocument/standard``, validated.
    public static let standard: Catalog = {
        do {
            return try CatalogDocument.standard.catalog()
        } catch {
            fatalError("the built-in catalog is invalid: \(error)")
        }
    }()
}
