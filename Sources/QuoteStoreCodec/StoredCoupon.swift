package import QuoteCore

/// A coupon's columns as both stores write them: a percentage or an amount off (the other
/// `nil`), and its expiry in milliseconds.
package struct StoredCoupon: Sendable, Hashable {
    package var code: String
    package var percentOff: Int?
    package var amountOffCents: Int64?
    package var expiresAt: Int64?

    /// The columns of `coupon`.
    package init(_ coupon: Coupon) {
        code = coupon.code
        switch coupon.discount {
        case .percent(let value): percentOff = value
        case .amount(let value): amountOffCents = value.cents
        }
        expiresAt = coupon.expiresAt.map(StoredTime.milliseconds)
    }
}
