/// What the marketplace offers and who can do it: services, mechanics and coupons.
///
/// A catalog is immutable and validated on creation: names, ids and codes are unique
/// (names and codes regardless of case), prices are not negative, and everything is in one
/// currency. Look-ups by name ignore case and surrounding spaces.
public struct Catalog: Sendable {
    /// The currency of every price in the catalog.
    public let currency: Currency
    /// The services, in the order given.
    public let services: [Service]
    /// The mechanics, in the order given (those added later at the end).
    public private(set) var mechanics: [Mechanic]
    /// The coupons, in the order given.
    public let coupons: [Coupon]
    /// The store's number for this catalog: each change to a stored catalog makes the next.
    /// 0 for a catalog not (yet) stored, as read from a file.
    public var version: Int64 = 0

    private let serviceIndex: NameIndex
    private var mechanicsByKey: [String: Int]
    private var mechanicsByID: [MechanicID: Int]
    private let couponsByKey: [String: Int]

    /// Creates a catalog, reporting every inconsistency at once.
    public init(
        currency: Currency = .usd, services: [Service], mechanics: [Mechanic], coupons: [Coupon] = []
    ) throws(CatalogError) {
        try self.init(
            currency: currency, services: services, mechanics: mechanics, coupons: coupons,
            positions: (Array(services.indices), Array(mechanics.indices), Array(coupons.indices)))
    }

    /// What is wrong with `text` as a catalog's name or code (it must be visible, short and
    /// free of control characters), as a catalog's problem says it; `nil` when nothing is.
    public static func textProblem(_ text: String) -> String? {
        if let scalar = TextHygiene.firstForbidden(in: text) {
            return "contains the control character \(TextHygiene.name(scalar))"
        }
        if text.isBlank { return "is empty" }
        if text.unicodeScalars.count > QuoteLimits.maximumTextLength {
            return "is longer than \(QuoteLimits.maximumTextLength) characters"
        }
        return nil
    }

    /// Validates, naming each entry by its position in the source (`positions`), which may
    /// differ from its position here when the source had entries that could not be read.
    init(
        currency: Currency, services: [Service], mechanics: [Mechanic], coupons: [Coupon],
        positions: (services: [Int], mechanics: [Int], coupons: [Int])
    ) throws(CatalogError) {
        var problems: [Problem] = []
        func checkText(_ text: String, at field: String) {
            if let problem = Self.textProblem(text) { problems.append(Problem(field: field, message: problem)) }
        }
        /// An amount: within 0...``Money/maximumCents`` so that every total fits.
        func checkBound(_ amount: Money, at field: String) {
            if amount.cents > Money.maximumCents {
                problems.append(
                    Problem(
                        field: field,
                        message: "\(amount) is more than \(Money(cents: Money.maximumCents, currency: amount.currency))"
                    ))
            }
        }
        /// Records `key` as seen at `index` of `list`, or a problem at `field` naming the
        /// entry (`what`) it duplicates.
        func checkUnique<Key: Hashable>(
            _ key: Key, at index: Int, in seen: inout [Key: Int], list: String, positions: [Int], field: String,
            what: String
        ) {
            if let first = seen[key] {
                problems.append(Problem(field: field, message: "duplicates \(list)[\(positions[first])] \(what)"))
            } else {
                seen[key] = index
            }
        }
        var servicesByKey: [String: Int] = [:]
        var serviceKeys: [String] = []
        serviceKeys.reserveCapacity(services.count)
        for (index, service) in services.enumerated() {
            let field = "services[\(positions.services[index])]"
            let key = Catalog.key(service.name)
            serviceKeys.append(key)
            checkText(service.name, at: "\(field).name")
            checkBound(service.price, at: "\(field).price")
            checkUnique(
                key, at: index, in: &servicesByKey, list: "services", positions: positions.services,
                field: "\(field).name", what: "\"\(QuoteLimits.echo(service.name))\"")
            if service.price.cents < 0 {
                problems.append(Problem(field: "\(field).price", message: "is negative (\(service.price))"))
            }
            if service.price.currency != currency {
                problems.append(
                    Problem(
                        field: "\(field).price", message: "is in \(service.price.currency), the catalog in \(currency)"
                    ))
            }
        }
        var mechanicsByKey: [String: Int] = [:]
        var mechanicsByID: [MechanicID: Int] = [:]
        for (index, mechanic) in mechanics.enumerated() {
            let field = "mechanics[\(positions.mechanics[index])]"
            let key = Catalog.key(mechanic.name)
            checkText(mechanic.name, at: "\(field).name")
            checkUnique(
                key, at: index, in: &mechanicsByKey, list: "mechanics", positions: positions.mechanics,
                field: "\(field).name", what: "\"\(QuoteLimits.echo(mechanic.name))\"")
            checkUnique(
                mechanic.id, at: index, in: &mechanicsByID, list: "mechanics", positions: positions.mechanics,
                field: "\(field).id", what: "id \(mechanic.id)")
            if !(1...MechanicID.maximum.rawValue).contains(mechanic.id.rawValue) {
                problems.append(Problem(field: "\(field).id", message: "must be 1 to \(MechanicID.maximum)"))
            }
        }
        var couponsByKey: [String: Int] = [:]
        for (index, coupon) in coupons.enumerated() {
            let field = "coupons[\(positions.coupons[index])]"
            let key = Catalog.key(coupon.code)
            checkText(coupon.code, at: "\(field).code")
            if case .amount(let amount) = coupon.discount { checkBound(amount, at: "\(field).amountOff") }
            checkUnique(
                key, at: index, in: &couponsByKey, list: "coupons", positions: positions.coupons,
                field: "\(field).code", what: "\"\(QuoteLimits.echo(coupon.code))\"")
            switch coupon.discount {
            case .percent(let percent) where !(1...100).contains(percent):
                problems.append(Problem(field: "\(field).percentOff", message: "must be 1 to 100, not \(percent)"))
            case .amount(let amount) where amount.cents <= 0:
                problems.append(Problem(field: "\(field).amountOff", message: "must be positive, not \(amount)"))
            case .amount(let amount) where amount.currency != currency:
                problems.append(
                    Problem(
                        field: "\(field).amountOff", message: "is in \(amount.currency), the catalog in \(currency)"))
            default: break
            }
        }
        if services.isEmpty { problems.append(Problem(field: "services", message: "must list at least one service")) }
        if mechanics.isEmpty {
            problems.append(Problem(field: "mechanics", message: "must list at least one mechanic"))
        }
        guard problems.isEmpty else { throw CatalogError(problems: problems) }
        self.currency = currency
        self.services = services
        self.mechanics = mechanics
        self.coupons = coupons
        serviceIndex = NameIndex(keys: serviceKeys, positions: servicesByKey)
        self.mechanicsByKey = mechanicsByKey
        self.mechanicsByID = mechanicsByID
        self.couponsByKey = couponsByKey
    }

    /// The service called `name`, ignoring case and surrounding spaces.
    public func service(named name: String) -> Service? {
        serviceIndex.position(of: name).map { services[$0] }
    }

    /// The mechanic called `name`, ignoring case and surrounding spaces.
    public func mechanic(named name: String) -> Mechanic? {
        mechanicsByKey[Catalog.key(name)].map { mechanics[$0] }
    }

    /// The mechanic with identifier `id`.
    public func mechanic(id: MechanicID) -> Mechanic? {
        mechanicsByID[id].map { mechanics[$0] }
    }

    /// The coupon with code `code`, ignoring case and surrounding spaces.
    public func coupon(code: String) -> Coupon? {
        couponsByKey[Catalog.key(code)].map { coupons[$0] }
    }

    /// This catalog with `mechanic` added at the end (their name and id must be new to it).
    public func adding(_ mechanic: Mechanic) -> Catalog {
        var catalog = self
        catalog.mechanicsByKey[Catalog.key(mechanic.name)] = catalog.mechanics.count
        catalog.mechanicsByID[mechanic.id] = catalog.mechanics.count
        catalog.mechanics.append(mechanic)
        return catalog
    }

    /// This catalog with the mechanic `mechanic.id` replaced by `mechanic` (same name).
    public func replacing(_ mechanic: Mechanic) -> Catalog {
        guard let index = mechanicsByID[mechanic.id] else { return self }
        var catalog = self
        catalog.mechanics[index] = mechanic
        return catalog
    }

    /// This catalog without the mechanic `id`.
    public func removing(_ id: MechanicID) -> Catalog {
        guard let index = mechanicsByID[id] else { return self }
        var catalog = self
        catalog.mechanics.remove(at: index)
        catalog.mechanicsByKey = [:]
        catalog.mechanicsByID = [:]
        for (position, mechanic) in catalog.mechanics.enumerated() {
            catalog.mechanicsByKey[Catalog.key(mechanic.name)] = position
            catalog.mechanicsByID[mechanic.id] = position
        }
        return catalog
    }

    /// The normalised look-up key of a name or code.
    static func key(_ name: String) -> String {
        // Every service of every submission is looked up so.
        name.trimmingPrefixAndSuffixSpaces().asciiFastLowercased
    }
}

/// A catalog that failed validation, with every problem found.
public struct CatalogError: Error, Sendable, CustomStringConvertible {
    /// Every inconsistency, each located by its path in the catalog data.
    public let problems: [Problem]

    public var description: String {
        "invalid catalog: " + problems.map(\.description).joined(separator: "; ")
    }
}
