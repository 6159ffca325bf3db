public import Foundation

/// How a quote's total came about: the lines, the coupon's discount, and the total.
public struct Pricing: Hashable, Sendable, Codable {
    /// The catalog services and their prices.
    public var lines: [LineItem]
    /// The sum of the lines.
    public var subtotal: Money
    /// The coupon applied, if any.
    public var coupon: String?
    /// What the coupon took off (zero without one).
    public var discount: Money
    /// What the customer pays.
    public var total: Money
    /// Whether support set the total by hand instead of the catalog's prices.
    public var isManual: Bool

    /// Creates a pricing from its parts, as stored.
    public init(lines: [LineItem], subtotal: Money, coupon: String?, discount: Money, total: Money, isManual: Bool) {
        self.lines = lines
        self.subtotal = subtotal
        self.coupon = coupon
        self.discount = discount
        self.total = total
        self.isManual = isManual
    }

    /// Prices `request` from the catalog: the sum of its services minus the coupon.
    ///
    /// Only meaningful when the request has no ``QuoteRequest/pendingReasons``. Refused, never
    /// trapped, when a line is in another currency (the catalog's changed since the request
    /// was made) or a sum is out of range.
    public static func automatic(for request: QuoteRequest, currency: Currency) throws(QuoteError) -> Pricing {
        let lines = catalogLines(of: request)
        do {
            let subtotal = try lines.lazy.map { $0.price }.sum(in: currency)
            let discount = try request.coupon?.discount(on: subtotal) ?? .zero(currency)
            return Pricing(
                lines: lines, subtotal: subtotal, coupon: request.coupon?.code, discount: discount,
                total: try subtotal.subtracting(discount), isManual: false)
        } catch {
            throw QuoteError(error)
        }
    }

    /// The request's catalog services, each a line at its catalog price (one array, made once).
    private static func catalogLines(of request: QuoteRequest) -> [LineItem] {
        var lines: [LineItem] = []
        lines.reserveCapacity(request.services.count)
        for service in request.services {
            if let listed = service.listed { lines.append(LineItem(service: listed.name, price: listed.price)) }
        }
        return lines
    }

    /// A total set by support; the catalog lines are kept for reference, with no discount.
    public static func manual(_ total: Money, for request: QuoteRequest) throws(QuoteError) -> Pricing {
        let lines = catalogLines(of: request)
        do {
            return Pricing(
                lines: lines, subtotal: try lines.lazy.map { $0.price }.sum(in: total.currency), coupon: nil,
                discount: .zero(total.currency), total: total, isManual: true)
        } catch {
            throw QuoteError(error)
        }
    }
}

/// What a customer gets when the work is done.
public struct Receipt: Hashable, Sendable, Codable {
    public var lines: [LineItem]
    public var subtotal: Money
    public var coupon: String?
    public var discount: Money
    public var total: Money
    /// Who did the work.
    public var mechanic: Mechanic
    /// Who pays.
    public var customer: Customer
    /// When the work was completed.
    public var completedAt: Date

    /// Creates the receipt of priced, assigned work completed at `completedAt`.
    public init(pricing: Pricing, mechanic: Mechanic, customer: Customer, completedAt: Date) {
        lines = pricing.lines
        subtotal = pricing.subtotal
        coupon = pricing.coupon
        discount = pricing.discount
        total = pricing.total
        self.mechanic = mechanic
        self.customer = customer
        self.completedAt = completedAt
    }
}
