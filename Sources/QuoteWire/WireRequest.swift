import Foundation
public import QuoteCore
public import QuoteRules

/// A client's request id, echoed in the reply: a string or a number, as the client sent it.
public enum RequestID: Codable, Sendable, Hashable {
    case string(String)
    case number(Int64)
    /// An integer beyond 64 bits, as it was written: refused, but echoed so that the refusal
    /// finds its request.
    case outOfRange(String)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .number(number)
        } else if let number = try? container.decode(Decimal.self) {
            // Whole: `3.0` is 3; a whole number beyond 64 bits is kept to be refused and echoed.
            var rounded = Decimal()
            var source = number
            NSDecimalRound(&rounded, &source, 0, .plain)
            guard rounded == number else {
                throw DecodingError.typeMismatch(
                    RequestID.self, .init(codingPath: decoder.codingPath, debugDescription: "not a whole number"))
            }
            self = Int64(exactlyWhole: number).map(Self.number) ?? .outOfRange("\(number)")
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .outOfRange(let value): try container.encode(Decimal(string: value) ?? 0)
        }
    }
}

/// The operations of wire protocol version 1.
public enum Operation: String, Sendable, Hashable, CaseIterable {
    case submit, get, list, resolve, book, complete, cancel, mechanics, services, stats, events, ping, waiting
    case setDuty, reassign
    case addMechanic, updateMechanic, retireMechanic, catalog, applyCatalog

    /// The operation called `rawValue`. Compared name by name, the commonest first: the
    /// synthesized look-up hashes every name into a table once there are this many.
    public init?(rawValue: String) {
        switch rawValue {
        case "submit": self = .submit
        case "get": self = .get
        case "book": self = .book
        case "complete": self = .complete
        case "cancel": self = .cancel
        case "list": self = .list
        case "resolve": self = .resolve
        case "ping": self = .ping
        case "events": self = .events
        case "stats": self = .stats
        case "mechanics": self = .mechanics
        case "services": self = .services
        case "waiting": self = .waiting
        case "setDuty": self = .setDuty
        case "reassign": self = .reassign
        case "addMechanic": self = .addMechanic
        case "updateMechanic": self = .updateMechanic
        case "retireMechanic": self = .retireMechanic
        case "catalog": self = .catalog
        case "applyCatalog": self = .applyCatalog
        default: return nil
        }
    }

    /// The operation whose name is the UTF-8 `bytes`, compared with each name of their length.
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return nil }
        for (name, operation) in Self.names where name.count == bytes.count {
            if name.withUnsafeBufferPointer({ name in name.baseAddress.map { memcmp($0, base, bytes.count) } }) == 0 {
                self = operation
                return
            }
        }
        return nil
    }

    /// Each operation's name in UTF-8, the commonest first.
    private static let names = allCases.map { (name: Array($0.rawValue.utf8), operation: $0) }

    /// Whether the operation changes state (and so goes through a store transaction).
    public var isWrite: Bool {
        switch self {
        case .submit, .resolve, .book, .complete, .cancel, .setDuty, .reassign, .addMechanic, .updateMechanic,
            .retireMechanic, .applyCatalog:
            true
        default: false
        }
    }
}

/// One request frame's fields: `{"v":1,"op":"...","id":...,...}`, as the daemon decodes them
/// in a single pass, whatever their order, and as a client's typed ``Request`` writes them.
///
/// Every field is optional here; ``WireRequest/action(currency:)`` checks what each operation needs
/// and reports every missing or wrong field at once.
public struct WireRequest: Encodable, Sendable, Hashable {
    public var v: Int?
    public var op: String?
    public var id: RequestID?

    // submit
    public var customer: Submission.CustomerInput?
    public var car: Submission.CarInput?
    public var services: [String]?
    public var mechanic: String?
    public var coupon: String?
    public var idempotencyKey: String?
    public var book: Bool?
    /// With `book`: wait in line when no mechanic is free, instead of being refused.
    public var wait: Bool?

    // get, resolve, book, complete, cancel
    public var quoteId: Int64?

    // list
    /// Whose quotes: an email address (exact, but for case) or the start of a name; sent as
    /// the `customer` key, a string here where `submit`'s is an object.
    public var customerSearch: String?
    public var state: String?
    public var after: Int64?
    public var limit: Int?

    // resolve
    public var year: Int?
    public var trim: String?
    public var make: String?
    public var model: String?
    public var price: String?
    public var priceCents: Int64?

    // cancel
    public var reason: String?

    // events
    public var since: Int64?

    // mechanics
    public var free: Bool?
    public var skill: String?

    // setDuty
    /// Whether the mechanic takes new bookings.
    public var onDuty: Bool?

    // addMechanic
    /// The new mechanic's name.
    public var name: String?

    // applyCatalog
    /// The catalog to put in force, as a catalog file holds it.
    public var catalog: CatalogDocument?
    /// The `catalog` object of a decoded frame, as it came: read into ``catalog`` by
    /// ``action(currency:)``, after the caller was authorized (never encoded).
    var catalogJSON: [UInt8]?

    /// Which keys the frame had, when decoded from one (never encoded).
    var presence = Presence()

    /// A request with no field set, not even `v`.
    init() {}

    /// An empty request; set the fields the operation needs.
    public init(op: Operation, id: RequestID? = nil) {
        self.v = 1
        self.op = op.rawValue
        self.id = id
    }
}

/// What a request asks the daemon to do, once validated.
public enum RequestAction: Sendable, Hashable {
    /// A change, applied in the next group commit.
    case write(QuoteCommand)
    /// A query, answered from committed state.
    case read(ReadQuery)
}

extension WireRequest {
    /// The largest page a `list` or `events` request may ask for.
    public static let maximumPage = 10_000

    /// Validates the request against its operation and says what to do, or why not.
    public func action(currency: Currency = .usd) throws(WireError) -> RequestAction {
        var request = self
        return try request.takeAction(currency: currency)
    }

    /// ``action(currency:)``, with a submission's parts moved out of the request into the
    /// action rather than copied (each copy retains every string it holds): the decoder's,
    /// which has no use for the request afterwards.
    mutating func takeAction(currency: Currency) throws(WireError) -> RequestAction {
        guard v == 1 else {
            throw WireError(
                code: .unsupportedVersion,
                message: v == nil
                    ? "\"v\" is required; this daemon speaks version 1" : "version \(v!) is not supported; use 1")
        }
        guard let name = op else {
            throw WireError(
                code: .invalidRequest, message: "\"op\" is required",
                problems: [Problem(field: "op", message: "is required")])
        }
        guard let operation = Operation(rawValue: name) else {
            throw WireError(
                code: .unknownOp,
                message:
                    "unknown op \"\(QuoteLimits.echo(name))\"; known: \(Operation.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        var problems: [Problem] = []
        if let problem = keyProblem(for: operation) { problems.append(problem) }
        // What the local functions read, taken out first: capturing `self` would copy the
        // whole request (every string it holds retained, then released).
        let (quoteId, skill) = (self.quoteId, self.skill)
        func quote() -> QuoteID {
            guard let quoteId else {
                problems.append(Problem(field: "quoteId", message: "is required"))
                return QuoteID(0)
            }
            if quoteId < 1 { problems.append(Problem(field: "quoteId", message: "must be 1 to \(Int64.max)")) }
            return QuoteID(quoteId)
        }
        func requiredSkill() -> Skill {
            guard let skill else {
                problems.append(Problem(field: "skill", message: "is required"))
                return .junior
            }
            guard let level = Skill.allCases.first(where: { $0.name == skill }) else {
                problems.append(
                    Problem(
                        field: "skill",
                        message:
                            "unknown skill \"\(QuoteLimits.echo(skill))\" (junior, apprentice, experienced, master)"))
                return .junior
            }
            return level
        }
        func page(_ value: Int?, default fallback: Int) -> Int {
            guard let value else { return fallback }
            guard (1...Self.maximumPage).contains(value) else {
                problems.append(Problem(field: "limit", message: "must be 1 to \(Self.maximumPage)"))
                return fallback
            }
            return value
        }
        let action: RequestAction
        switch operation {
        case .submit:
            if customerSearch != nil {
                problems.append(Problem(field: "customer", message: "must be an object with name, email and address"))
            }
            let submission = Submission(
                customer: customer.take(), car: car.take(), services: services.take(), mechanic: mechanic.take(),
                coupon: coupon.take())
            if wait == true && book != true {
                problems.append(Problem(field: "wait", message: "applies only with \"book\": true"))
            }
            action = .write(
                .submit(submission, idempotencyKey: idempotencyKey.take(), book: book ?? false, wait: wait ?? false))
        case .resolve:
            var amount: Money?
            if let price {
                amount = Self.amount(price).map { Money(cents: $0, currency: currency) }
                if amount == nil {
                    problems.append(
                        Problem(
                            field: "price",
                            message:
                                "\"\(QuoteLimits.echo(price))\" is not an amount from 0 to 1000000000.00 written like 66.25"
                        ))
                }
            }
            if let priceCents {
                if price != nil {
                    // Two prices that may disagree: neither is taken.
                    problems.append(Problem(field: "priceCents", message: "give price or priceCents, not both"))
                } else if !(0...Money.maximumCents).contains(priceCents) {
                    problems.append(Problem(field: "priceCents", message: "must be 0 to \(Money.maximumCents)"))
                } else {
                    amount = Money(cents: priceCents, currency: currency)
                }
            }
            if let year, !Self.plausibleYears.contains(year) {
                problems.append(
                    Problem(
                        field: "year",
                        message: "must be \(Self.plausibleYears.lowerBound) to \(Self.plausibleYears.upperBound)"))
            }
            if services?.isEmpty == true {
                problems.append(Problem(field: "services", message: "must list at least one service"))
            }
            let car = Submission.CarInput(make: make, model: model, year: year, trim: trim)
            let resolution = Resolution(car: car == .init() ? nil : car, services: services, price: amount)
            action = .write(.resolve(quote(), resolution))
        case .book: action = .write(.book(quote(), mechanic: mechanic, wait: wait ?? false))
        case .complete: action = .write(.complete(quote()))
        case .cancel: action = .write(.cancel(quote(), reason: reason))
        case .get: action = .read(.get(quote()))
        case .list:
            var status: QuoteStatus?
            if let state {
                status = QuoteStatus(rawValue: state)
                if status == nil {
                    problems.append(
                        Problem(
                            field: "state",
                            message:
                                "unknown state \"\(QuoteLimits.echo(state))\" (\(QuoteStatus.allCases.map(\.rawValue).joined(separator: ", ")))"
                        ))
                }
            }
            if let after, after < 0 { problems.append(Problem(field: "after", message: "must not be negative")) }
            var search: CustomerSearch?
            if customer != nil {
                problems.append(
                    Problem(field: "customer", message: "must be a string: an email address or the start of a name"))
            } else if let customerSearch {
                search = CustomerSearch(customerSearch)
                if search == nil { problems.append(Problem(field: "customer", message: "must not be blank")) }
            }
            action = .read(
                .list(
                    status: status, customer: search, after: after.map(QuoteID.init),
                    limit: page(limit, default: 100)))
        case .mechanics:
            var level: Skill?
            if let skill {
                level = Skill.allCases.first { $0.name == skill }
                if level == nil {
                    problems.append(Problem(field: "skill", message: "unknown skill \"\(QuoteLimits.echo(skill))\""))
                }
            }
            action = .read(.mechanics(freeOnly: free ?? false, skill: level))
        case .services: action = .read(.services)
        case .stats: action = .read(.stats)
        case .events:
            if let since, since < 0 { problems.append(Problem(field: "since", message: "must not be negative")) }
            action = .read(.events(since: since ?? 0, limit: page(limit, default: 1_000)))
        case .ping: action = .read(.ping)
        case .setDuty:
            if mechanic == nil { problems.append(Problem(field: "mechanic", message: "is required")) }
            if onDuty == nil { problems.append(Problem(field: "onDuty", message: "is required")) }
            action = .write(.setDuty(mechanic: mechanic ?? "", onDuty: onDuty ?? true))
        case .reassign: action = .write(.reassign(quote(), mechanic: mechanic))
        case .addMechanic:
            if let name = self.name {
                if name.isBlank { problems.append(Problem(field: "name", message: "must not be blank")) }
            } else {
                problems.append(Problem(field: "name", message: "is required"))
            }
            action = .write(.addMechanic(name: self.name ?? "", skill: requiredSkill()))
        case .updateMechanic:
            if mechanic == nil { problems.append(Problem(field: "mechanic", message: "is required")) }
            action = .write(.updateMechanic(mechanic: mechanic ?? "", skill: requiredSkill()))
        case .retireMechanic:
            if mechanic == nil { problems.append(Problem(field: "mechanic", message: "is required")) }
            action = .write(.retireMechanic(mechanic: mechanic ?? ""))
        case .catalog: action = .read(.catalog)
        case .applyCatalog:
            var checked: Catalog?
            var document = catalog
            if document == nil, let json = catalogJSON {
                let read = Self.catalogDocument(json)
                document = read.document
                if let problem = read.problem { problems.append(problem) }
            }
            if let catalog = document {
                do {
                    checked = try catalog.catalog()
                } catch  where problems.isEmpty {
                    // What no schema can say (names unique whatever their case, one currency):
                    // a domain refusal, with every problem at its path.
                    throw WireError(
                        code: .invalidCatalog, message: "the catalog has problems; nothing was applied",
                        problems: error.problems.map { Problem(field: "catalog.\($0.field)", message: $0.message) })
                } catch {
                    // The request's own problems first.
                }
            } else if catalogJSON == nil {
                problems.append(Problem(field: "catalog", message: "is required"))
            }
            action = checked.map { .write(.applyCatalog($0)) } ?? .read(.catalog)
        case .waiting: action = .read(.waiting(limit: page(limit, default: 1_000)))
        }
        guard problems.isEmpty else {
            throw WireError(code: .invalidRequest, message: "the \(name) request has problems", problems: problems)
        }
        return action
    }
}

extension WireRequest {
    /// The catalog document in `json`, a JSON object, or the problem with it: a field of the
    /// wrong type, or a key a catalog does not have.
    static func catalogDocument(_ json: [UInt8]) -> (document: CatalogDocument?, problem: Problem?) {
        // Before anything compares, sorts or hashes its text: Unicode comparison of a string
        // is not linear in its length (a run of combining marks is sorted to normalize it).
        let longest = CatalogDocument.longestString(in: json)
        guard longest <= CatalogDocument.maximumStringLength else {
            return (
                nil,
                Problem(
                    field: "catalog",
                    message:
                        "has a text of \(longest) characters; a catalog's are read up to \(CatalogDocument.maximumStringLength)"
                )
            )
        }
        let data = Data(json)
        guard let document = try? JSONDecoder().decode(CatalogDocument.self, from: data) else {
            return (nil, Problem(field: "catalog", message: "must be a catalog object (as a catalog file holds it)"))
        }
        if let unknown = CatalogDocument.firstUnknownKey(in: data) {
            return (nil, Problem(field: QuoteLimits.echo(unknown), message: "is not a field of a catalog"))
        }
        return (document, nil)
    }
}

extension WireRequest {
    /// Model years quoted accepts, on a submission's car and in a resolution.
    public static let plausibleYears = 1886...2100

    /// The cents of a `price`: digits, optionally a point and one or two more, at most
    /// 1000000000.00 (`Money.maximumCents`); exactly the schema's pattern, no sign, symbol or
    /// space.
    static func amount(_ text: String) -> Int64? {
        var whole: Int64 = 0
        var fraction: Int64 = 0
        var wholeDigits = 0
        var fractionDigits = -1
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard fractionDigits < 0, wholeDigits > 0 else { return nil }
                fractionDigits = 0
                continue
            }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int64(byte - UInt8(ascii: "0"))
            if fractionDigits < 0 {
                wholeDigits += 1
                guard wholeDigits <= 10 else { return nil }
                whole = whole * 10 + digit
            } else {
                fractionDigits += 1
                guard fractionDigits <= 2 else { return nil }
                fraction = fraction * 10 + digit
            }
        }
        // Ten whole digits only for the largest amount itself (no leading zero, as the schema says).
        guard wholeDigits > 0, fractionDigits != 0, wholeDigits < 10 || whole == 1_000_000_000 else { return nil }
        let cents = whole * 100 + (fractionDigits == 1 ? fraction * 10 : fraction)
        return cents <= Money.maximumCents ? cents : nil
    }
}

extension WireRequest {
    /// Every field that is set, under its key; `customer` is `submit`'s object or `list`'s
    /// search text, whichever is set.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(v, forKey: .v)
        try container.encodeIfPresent(op, forKey: .op)
        try container.encodeIfPresent(id, forKey: .id)
        if let customerSearch {
            try container.encode(customerSearch, forKey: .customer)
        } else {
            try container.encodeIfPresent(customer, forKey: .customer)
        }
        try container.encodeIfPresent(car, forKey: .car)
        try container.encodeIfPresent(services, forKey: .services)
        try container.encodeIfPresent(mechanic, forKey: .mechanic)
        try container.encodeIfPresent(coupon, forKey: .coupon)
        try container.encodeIfPresent(idempotencyKey, forKey: .idempotencyKey)
        try container.encodeIfPresent(book, forKey: .book)
        try container.encodeIfPresent(wait, forKey: .wait)
        try container.encodeIfPresent(quoteId, forKey: .quoteId)
        try container.encodeIfPresent(state, forKey: .state)
        try container.encodeIfPresent(after, forKey: .after)
        try container.encodeIfPresent(limit, forKey: .limit)
        try container.encodeIfPresent(year, forKey: .year)
        try container.encodeIfPresent(trim, forKey: .trim)
        try container.encodeIfPresent(make, forKey: .make)
        try container.encodeIfPresent(model, forKey: .model)
        try container.encodeIfPresent(price, forKey: .price)
        try container.encodeIfPresent(priceCents, forKey: .priceCents)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encodeIfPresent(since, forKey: .since)
        try container.encodeIfPresent(free, forKey: .free)
        try container.encodeIfPresent(skill, forKey: .skill)
        try container.encodeIfPresent(onDuty, forKey: .onDuty)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(catalog, forKey: .catalog)
    }

    enum CodingKeys: String, CodingKey {
        case v, op, id, customer, car, services, mechanic, coupon, idempotencyKey, book, wait, quoteId, state, after,
            limit
        case year, trim, make, model, price, priceCents, reason, since, free, skill, onDuty, name, catalog
    }
}
