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

extension StoredCoupon {
    /// Columns as read back.
    package init(code: String, percentOff: Int?, amountOffCents: Int64?, expiresAt: Int64?) {
        self.code = code
        self.percentOff = percentOff
        self.amountOffCents = amountOffCents
        self.expiresAt = expiresAt
    }

    /// The coupon these columns hold, its amount in `currency`.
    package func coupon(in currency: Currency) -> Coupon {
        let discount: Coupon.Discount =
            if let amountOffCents { .amount(Money(cents: amountOffCents, currency: currency)) } else {
                .percent(percentOff ?? 0)
            }
        return Coupon(code: code, discount: discount, expiresAt: expiresAt.map(StoredTime.date))
    }
}
