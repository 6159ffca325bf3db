/// What support fills in to turn a pending quote into a ready one: missing car details,
/// a corrected list of services, and/or a price set by hand.
public struct Resolution: Hashable, Sendable, Codable {
    /// The car's details to fill or correct: each one given replaces the quote's.
    public var car: Submission.CarInput?
    /// Replaces the quote's services; every name must be in the catalog.
    public var services: [String]?
    /// A total set by hand; makes the quote ready whatever else is missing.
    public var price: Money?

    /// Creates a resolution; a car with no detail given is none.
    public init(car: Submission.CarInput? = nil, services: [String]? = nil, price: Money? = nil) {
        self.car = car == Submission.CarInput() ? nil : car
        self.services = services
        self.price = price
    }

    /// The request with this resolution's fields filled in, or every problem with them.
    func applied(to request: QuoteRequest, in catalog: Catalog) throws(QuoteError) -> QuoteRequest {
        var problems: [Problem] = []
        var updated = request
        if let year = car?.year {
            if (1886...2100).contains(year) {
                updated.car.year = year
            } else {
                problems.append(Problem(field: "year", message: "\(year) is not a plausible model year"))
            }
        }
        if let trim = car?.trim?.trimmingPrefixAndSuffixSpaces(), !trim.isBlank { updated.car.trim = trim }
        if let make = car?.make?.trimmingPrefixAndSuffixSpaces(), !make.isBlank { updated.car.make = make }
        if let model = car?.model?.trimmingPrefixAndSuffixSpaces(), !model.isBlank { updated.car.model = model }
        if let services {
            var listed: [RequestedService] = []
            var seen: Set<String> = []
            if services.isEmpty {
                problems.append(Problem(field: "services", message: "must list at least one service"))
            } else if services.count > QuoteLimits.maximumServices {
                problems.append(
                    Problem(
                        field: "services",
                        message: "lists \(services.count) services; at most \(QuoteLimits.maximumServices) are allowed")
                )
            }
            for (index, name) in services.prefix(QuoteLimits.maximumServices).enumerated() {
                if let service = catalog.service(named: name) {
                    if seen.insert(service.name).inserted {
                        listed.append(RequestedService(name: service.name, listed: service))
                    }
                } else {
                    problems.append(
                        Problem(
                            field: "services[\(index)]", message: "service \"\(QuoteLimits.echo(name))\" not in catalog"
                        ))
                }
            }
            updated.services = listed
        }
        guard problems.isEmpty else {
            throw QuoteError(.invalidResolution, "the resolution has problems", problems: problems)
        }
        return updated
    }
}
