public import Foundation

/// A discount code a customer may add to a quote.
public struct Coupon: Hashable, Sendable, Codable {
    /// How much a coupon takes off.
    public enum Discount: Hashable, Sendable, Codable {
        /// A percentage of the services' subtotal, 1 to 100.
        case percent(Int)
        /// A fixed amount, never more than the subtotal.
        case amount(Money)
    }

    /// The code the customer types, unique in the catalog regardless of case: `WELCOME10`.
    public var code: String
    /// What it takes off.
    public var discount: Discount
    /// When it stops being accepted; `nil` for never.
    public var expiresAt: Date?

    /// Creates a coupon.
    public init(code: String, discount: Discount, expiresAt: Date? = nil) {
        self.code = code
        self.discount = discount
        self.expiresAt = expiresAt
    }

    /// Whether the coupon has expired at `date`.
    public func isExpired(at date: Date) -> Bool {
        guard let expiresAt else { return false }
        return date >= expiresAt
    }

    /// The discount on `subtotal`: never negative and never more than the subtotal.
    public func discount(on subtotal: Money) throws(MoneyError) -> Money {
        let raw: Money
        switch discount {
        case .percent(let percent): raw = try subtotal.percentage(percent)
        case .amount(let amount): raw = Money(cents: amount.cents, currency: subtotal.currency)
        }
        return Money(cents: min(max(raw.cents, 0), max(subtotal.cents, 0)), currency: subtotal.currency)
    }
}
