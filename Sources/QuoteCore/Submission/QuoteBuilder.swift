public import Foundation

/// Builds a ``QuoteRequest`` step by step, in any order, and validates it as a whole.
///
/// Unlike the article's builder, which stopped at the first problem and printed it, this one
/// reports every problem at once, each with a field path, and creates nothing unless the
/// request is valid. It has no side effects: picking and claiming a mechanic is the store's
/// job, so no busy flag is ever set on a copy.
public struct QuoteBuilder: Sendable, Hashable {
    private var customer: Submission.CustomerInput?
    private var car: Submission.CarInput?
    private var services: [String] = []
    /// The services' catalog keys (``Catalog/key(_:)``), once there are many: a constant-time
    /// check that a name is already there (a few are compared faster than hashed).
    private var serviceKeySet: Set<String>?
    private var servicesGiven = false
    private var mechanic: String?
    private var coupon: String?

    /// An empty builder.
    public init() {}

    /// A builder holding everything a client submitted.
    public init(_ submission: borrowing Submission) {
        customer = submission.customer
        car = submission.car
        if let names = submission.services {
            servicesGiven = true
            // Usually each name once: the client's array is kept as it is rather than grown a
            // name at a time.
            if Self.eachOnce(names) {
                services = names
            } else {
                for name in names { addService(name) }
            }
        }
        mechanic = submission.mechanic
        coupon = submission.coupon
    }

    /// Sets the customer.
    public mutating func setCustomer(name: String?, email: String?, address: String?) {
        customer = .init(name: name, email: email, address: address)
    }

    /// Sets the car.
    public mutating func setCar(make: String?, model: String?, year: Int? = nil, trim: String? = nil) {
        car = .init(make: make, model: model, year: year, trim: trim)
    }

    /// Whether no key but the empty one (a blank name, refused later) is there twice.
    private static func eachOnce(_ names: [String]) -> Bool {
        guard names.count > 8 else {
            for index in names.indices {
                if names[..<index].contains(where: { NameIndex.sameKey($0, names[index]) }) { return false }
            }
            return true
        }
        var seen = Set<String>(minimumCapacity: names.count)
        return names.allSatisfy { name in
            let key = Catalog.key(name)
            return key.isEmpty || seen.insert(key).inserted
        }
    }

    /// Adds a service by name; adding one already there (in any case) changes nothing.
    public mutating func addService(_ name: String) {
        servicesGiven = true
        if !NameIndex.hasEmptyKey(name) {
            if serviceKeySet == nil && services.count >= 8 {
                serviceKeySet = Set(services.map(Catalog.key).filter { !$0.isEmpty })
            }
            if serviceKeySet != nil {
                guard serviceKeySet?.insert(Catalog.key(name)).inserted == true else { return }
            } else if services.contains(where: { NameIndex.sameKey($0, name) }) {
                return
            }
        }
        services.append(name)
    }

    /// Removes a service by name, in any case.
    public mutating func removeService(_ name: String) {
        let key = Catalog.key(name)
        serviceKeySet?.remove(key)
        services.removeAll { Catalog.key($0) == key }
    }

    /// Names the mechanic the customer would like; `nil` lets the system choose.
    public mutating func setMechanic(_ name: String?) {
        mechanic = name
    }

    /// Sets the coupon code; `nil` removes it.
    public mutating func setCoupon(_ code: String?) {
        coupon = code
    }

    /// Everything wrong with the request so far, against `catalog` at time `now`.
    public func problems(in catalog: Catalog, at now: Date) -> [Problem] {
        switch validate(in: catalog, at: now) {
        case .success: []
        case .failure(let error): error.problems
        }
    }

    /// The validated request, or a ``QuoteError/Code/invalidSubmission`` listing every problem.
    public func build(in catalog: Catalog, at now: Date) throws(QuoteError) -> QuoteRequest {
        try validate(in: catalog, at: now).get()
    }

    /// What `QuoteBuilder(submission).build(in: catalog, at: now)` returns, read from
    /// `submission` where it lies: a builder would copy its every string first (each copy a
    /// retain, and its release after), and this runs for every submission.
    public static func build(
        _ submission: borrowing Submission, in catalog: Catalog, at now: Date
    ) throws(QuoteError) -> QuoteRequest {
        // A service named twice (in any case) is kept once, as `addService` keeps it: the
        // builder's way, for what is rare.
        if let names = submission.services, !eachOnce(names) {
            return try QuoteBuilder(submission).build(in: catalog, at: now)
        }
        return try validate(
            customer: submission.customer, car: submission.car, services: submission.services ?? [],
            servicesGiven: submission.services != nil, mechanic: submission.mechanic, coupon: submission.coupon,
            in: catalog, at: now
        ).get()
    }

    private func validate(in catalog: Catalog, at now: Date) -> Result<QuoteRequest, QuoteError> {
        Self.validate(
            customer: customer, car: car, services: services, servicesGiven: servicesGiven, mechanic: mechanic,
            coupon: coupon, in: catalog, at: now)
    }

    /// The request the parts make, or every problem they have, against `catalog` at `now`;
    /// `services` hold each name once (blank ones aside, refused one by one).
    private static func validate(
        customer: Submission.CustomerInput?, car: Submission.CarInput?, services: [String], servicesGiven: Bool,
        mechanic: String?, coupon: String?, in catalog: Catalog, at now: Date
    ) -> Result<QuoteRequest, QuoteError> {
        var problems: [Problem] = []

        func required(_ value: String?, _ field: String) -> String? {
            if let value, value.hasVisibleASCIIEnds { return value }
            guard let value, !value.isBlank else {
                problems.append(Problem(field: field, message: "is required"))
                return nil
            }
            return value.trimmingPrefixAndSuffixSpaces()
        }

        var validCustomer: Customer?
        if let customer {
            let name = required(customer.name, "customer.name")
            var email = required(customer.email, "customer.email")
            if let given = email, !Customer.isPlausibleEmail(given) {
                problems.append(
                    Problem(
                        field: "customer.email",
                        message: "\"\(QuoteLimits.echo(given))\" is not a plausible email address"))
                email = nil
            }
            let address = required(customer.address, "customer.address")
            if let name, let email, let address {
                validCustomer = Customer(name: name, email: email, address: address)
            }
        } else {
            problems.append(Problem(field: "customer", message: "is required (name, email, address)"))
        }

        var validCar: Car?
        if let car {
            let make = required(car.make, "car.make")
            let model = required(car.model, "car.model")
            var yearOK = true
            if let year = car.year, !(1886...2100).contains(year) {
                problems.append(Problem(field: "car.year", message: "\(year) is not a plausible model year"))
                yearOK = false
            }
            // Trimming removes only invisible characters: a blank trim is blank either way.
            let trim = car.trim.flatMap {
                $0.hasVisibleASCIIEnds ? $0 : $0.isBlank ? nil : $0.trimmingPrefixAndSuffixSpaces()
            }
            if let make, let model, yearOK {
                validCar = Car(make: make, model: model, year: car.year, trim: trim)
            }
        } else {
            problems.append(Problem(field: "car", message: "is required (make and model at least)"))
        }

        var requested: [RequestedService] = []
        requested.reserveCapacity(min(services.count, QuoteLimits.maximumServices))
        if services.isEmpty {
            problems.append(
                Problem(
                    field: "services",
                    message: servicesGiven ? "must list at least one service" : "is required (one or more services)"))
        } else if services.count > QuoteLimits.maximumServices {
            problems.append(
                Problem(
                    field: "services",
                    message: "lists \(services.count) services; at most \(QuoteLimits.maximumServices) are allowed"))
        }
        for (index, name) in services.prefix(QuoteLimits.maximumServices).enumerated() {
            let plain = name.hasVisibleASCIIEnds
            let trimmed = plain ? name : name.trimmingPrefixAndSuffixSpaces()
            if !plain && trimmed.isBlank {
                problems.append(Problem(field: "services[\(index)]", message: "is empty"))
            } else if let service = catalog.service(named: trimmed) {
                requested.append(RequestedService(name: service.name, listed: service))
            } else {
                requested.append(RequestedService(name: trimmed, listed: nil))
            }
        }

        // What only the catalog can say, apart: refused with its own code when nothing else is wrong.
        let shapeProblems = problems.count
        var preferred: Mechanic?
        if let name = mechanic?.trimmingPrefixAndSuffixSpaces(), !name.isBlank {
            if let found = catalog.mechanic(named: name) {
                let beyond = found.servicesBeyondSkill(requested.compactMap(\.listed))
                if beyond.isEmpty {
                    preferred = found
                } else {
                    let names = beyond.map(\.name).joined(separator: ", ")
                    problems.append(Problem(field: "mechanic", message: "\(found.name) cannot perform \(names)"))
                }
            } else {
                problems.append(
                    Problem(field: "mechanic", message: "no mechanic named \"\(QuoteLimits.echo(name))\""))
            }
        }

        var validCoupon: Coupon?
        if let code = coupon?.trimmingPrefixAndSuffixSpaces(), !code.isBlank {
            if let found = catalog.coupon(code: code) {
                if found.isExpired(at: now) {
                    problems.append(Problem(field: "coupon", message: "\(found.code) has expired"))
                } else {
                    validCoupon = found
                }
            } else {
                problems.append(Problem(field: "coupon", message: "no coupon \"\(QuoteLimits.echo(code))\""))
            }
        }

        guard problems.isEmpty, let validCustomer, let validCar else {
            let count = problems.count
            if shapeProblems == 0, count > 0 {
                return .failure(
                    QuoteError(
                        .notInCatalog,
                        "the submission names what the catalog cannot give it (\(count) problem\(count == 1 ? "" : "s"))",
                        problems: problems))
            }
            return .failure(
                QuoteError(
                    .invalidSubmission, "the submission has \(count) problem\(count == 1 ? "" : "s")",
                    problems: problems))
        }
        return .success(
            QuoteRequest(
                customer: validCustomer, car: validCar, services: requested, preferredMechanic: preferred,
                coupon: validCoupon))
    }
}
