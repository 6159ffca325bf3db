/// One priced line of a quote or receipt.
public struct LineItem: Hashable, Sendable, Codable {
    /// The service's name.
    public var service: String
    /// Its price.
    public var price: Money

    /// Creates a line.
    public init(service: String, price: Money) {
        self.service = service
        self.price = price
    }
}
