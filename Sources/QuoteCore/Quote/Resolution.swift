/// What support fills in to turn a pending quote into a ready one: missing car details,
/// a corrected list of services, and/or a price set by hand.
public struct Resolution: Hashable, Sendable, Codable {
    public var year: Int?
    public var trim: String?
    public var make: String?
    public var model: String?
    /// Replaces the quote's services; every name must be in the catalog.
    public var services: [String]?
    /// A total set by hand; makes the quote ready whatever else is missing.
    public var price: Money?

    /// Creates a resolution.
    public init(
        year: Int? = nil, trim: String? = nil, make: String? = nil, model: String? = nil, services: [String]? = nil,
        price: Money? = nil
    ) {
        self.year = year
        self.trim = trim
        self.make = make
        self.model = model
        self.services = services
        self.price = price
    }

    /// The request with this resolution's fields filled in, or every problem with them.
    func applied(to request: QuoteRequest, in catalog: Catalog) throws(QuoteError) -> QuoteRequest {
        var problems: [Problem] = []
        var updated = request
        if let year {
            if (1886...2100).contains(year) {
                updated.car.year = year
            } else {
                problems.append(Problem(field: "year", message: "\(year) is not a plausible model year"))
            }
        }
        if let trim = trim?.trimmingPrefixAndSuffixSpaces(), !trim.isEmpty { updated.car.trim = trim }
        if let make = make?.trimmingPrefixAndSuffixSpaces(), !make.isEmpty { updated.car.make = make }
        if let model = model?.trimmingPrefixAndSuffixSpaces(), !model.isEmpty { updated.car.model = model }
        if let services {
            var listed: [RequestedService] = []
            if services.isEmpty {
                problems.append(Problem(field: "services", message: "must list at least one service"))
            }
            for (index, name) in services.enumerated() {
                if let service = catalog.service(named: name) {
                    if !listed.contains(where: { $0.name == service.name }) {
                        listed.append(RequestedService(name: service.name, listed: service))
                    }
                } else {
                    problems.append(Problem(field: "services[\(index)]", message: "service \"\(name)\" not in catalog"))
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
