/// An ISO 4217 currency, with the symbol people expect to see before an amount.
public struct Currency: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The ISO 4217 code, such as `USD`.
    public let code: String

    /// Creates a currency from its three-letter code.
    public init(_ code: String) {
        // Most codes come uppercase already (every stored quote's does): kept as they are.
        self.code = code.utf8.allSatisfy { $0 < 0x80 && !(0x61...0x7A).contains($0) } ? code : code.uppercased()
    }

    /// US dollars, the default catalog's currency.
    public static let usd = Currency("USD")

    /// The symbol shown before amounts: `$` for dollars, the code and a space otherwise.
    public var symbol: String {
        switch code {
        case "USD", "CAD", "AUD", "NZD": "$"
        case "EUR": "€"
        case "GBP": "£"
        default: code + " "
        }
    }

    public var description: String { code }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(code)
    }
}

/// An amount of money in integer minor units (cents), never floating point, so that prices,
/// discounts and totals add up exactly and survive every round trip.
public struct Money: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The amount in minor units: 6625 is $66.25.
    public var cents: Int64
    /// The currency of the amount.
    public var currency: Currency

    /// Creates an amount of `cents` minor units of `currency`.
    public init(cents: Int64, currency: Currency = .usd) {
        self.cents = cents
        self.currency = currency
    }

    /// Zero in `currency`.
    public static func zero(_ currency: Currency = .usd) -> Money {
        Money(cents: 0, currency: currency)
    }

    /// Parses a decimal amount such as `66.25`, `$66.25`, `66.5` or `66`, exactly.
    ///
    /// - Returns: `nil` for anything that is not a plain amount with at most two decimals.
    public init?(parsing text: String, currency: Currency = .usd) {
        var text = Substring(text.trimmingPrefixAndSuffixSpaces())
        var negative = false
        if text.first == "-" {
            negative = true
            text = text.dropFirst()
        }
        if text.hasPrefix(currency.symbol) { text = text.dropFirst(currency.symbol.count) }
        if text.first == "$" { text = text.dropFirst() }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit), whole.count <= 15
        else { return nil }
        var fraction: Int64 = 0
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...2).contains(digits.count), digits.allSatisfy(\.isASCIIDigit) else { return nil }
            guard let value = Int64(digits) else { return nil }
            fraction = value * (digits.count == 1 ? 10 : 1)
        }
        guard let units = Int64(whole) else { return nil }
        let cents = units * 100 + fraction
        self.init(cents: negative ? -cents : cents, currency: currency)
    }

    /// The amount as people read it: `$66.25`, `-$5.00`.
    public var formatted: String {
        withFormattedBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with ``formatted``'s UTF-8 bytes, valid only during the call: a writer
    /// copies them without a `String` made for them (every quote published shows its total so,
    /// twice).
    @inlinable public func withFormattedBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        let magnitude = cents.magnitude
        return try currency.symbol.withUTF8Bytes { symbol in
            // The sign, the symbol, up to 17 digits of units, the point and two of cents.
            try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: symbol.count + 22) { buffer in
                var count = 0
                if cents < 0 {
                    buffer[0] = UInt8(ascii: "-")
                    count = 1
                }
                for byte in symbol {
                    buffer[count] = byte
                    count += 1
                }
                var units = magnitude / 100
                var digits = 1
                while units >= 10 {
                    units /= 10
                    digits += 1
                }
                units = magnitude / 100
                for index in stride(from: count + digits - 1, through: count, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(units % 10)
                    units /= 10
                }
                count += digits
                let fraction = magnitude % 100
                buffer[count] = UInt8(ascii: ".")
                buffer[count + 1] = UInt8(ascii: "0") + UInt8(fraction / 10)
                buffer[count + 2] = UInt8(ascii: "0") + UInt8(fraction % 10)
                return try body(UnsafeBufferPointer(rebasing: buffer[..<(count + 3)]))
            }
        }
    }

    /// The amount as a plain decimal without symbol: `66.25`.
    public var decimalString: String {
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return "\(cents < 0 ? "-" : "")\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public var description: String { formatted }

    /// The largest amount a catalog price, a coupon or a price set by hand may have:
    /// $1,000,000,000.00 in cents. With at most ``QuoteLimits/maximumServices`` lines, every
    /// subtotal, discount and total stays far inside `Int64`.
    public static let maximumCents: Int64 = 100_000_000_000

    /// `percent`% of this amount, rounded half away from zero to the cent; throws instead of
    /// overflowing.
    public func percentage(_ percent: Int) throws(MoneyError) -> Money {
        let (product, overflow) = cents.multipliedReportingOverflow(by: Int64(clamping: percent))
        guard !overflow, product != .min else { throw MoneyError(.overflow, "\(self) x \(percent)% is out of range") }
        let (rounded, overflowRounding) = product.magnitude.addingReportingOverflow(50)
        guard !overflowRounding else { throw MoneyError(.overflow, "\(self) x \(percent)% is out of range") }
        let value = Int64(rounded / 100)
        return Money(cents: product < 0 ? -value : value, currency: currency)
    }

    /// This amount plus `other`, which must be in the same currency; throws on a mismatch or
    /// an overflow instead of trapping.
    public func adding(_ other: Money) throws(MoneyError) -> Money {
        try combined(with: other, "+", Int64.addingReportingOverflow)
    }

    /// This amount minus `other`, which must be in the same currency; throws on a mismatch or
    /// an overflow instead of trapping.
    public func subtracting(_ other: Money) throws(MoneyError) -> Money {
        try combined(with: other, "-", Int64.subtractingReportingOverflow)
    }

    private func combined(
        with other: Money, _ symbol: String, _ operation: (Int64) -> (Int64) -> (partialValue: Int64, overflow: Bool)
    ) throws(MoneyError) -> Money {
        guard currency == other.currency else {
            throw MoneyError(.currencyMismatch, "cannot compute \(currency) \(symbol) \(other.currency)")
        }
        let (result, overflow) = operation(cents)(other.cents)
        guard !overflow else { throw MoneyError(.overflow, "\(self) \(symbol) \(other) is out of range") }
        return Money(cents: result, currency: currency)
    }

    /// Orders by currency code, then amount: total, and never a trap on mixed currencies.
    public static func < (lhs: Money, rhs: Money) -> Bool {
        (lhs.currency.code, lhs.cents) < (rhs.currency.code, rhs.cents)
    }
}

/// Why money arithmetic was refused: amounts in two currencies, or a result beyond `Int64`.
public struct MoneyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure. New kinds may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case currencyMismatch = "currency_mismatch"
            case overflow
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The two amounts are in different currencies.
        public static let currencyMismatch = Code(.currencyMismatch)
        /// The result does not fit in 64-bit cents.
        public static let overflow = Code(.overflow)

        public var description: String { base.rawValue }
    }

    /// What failed.
    public let code: Code
    /// A sentence for people.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension Sequence where Element == Money {
    /// The sum of the amounts, all in `currency`; throws on a mismatch or an overflow.
    public func sum(in currency: Currency) throws(MoneyError) -> Money {
        var total = Money.zero(currency)
        for amount in self { total = try total.adding(amount) }
        return total
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension String {
    /// The text without leading and trailing spaces, tabs and newlines.
    ///
    /// Works on UTF-8 bytes: the four trimmed characters are ASCII, and an ASCII byte never
    /// occurs inside a multi-byte sequence. Text with nothing to trim is returned as is, without
    /// copying (validation trims every field of every submission).
    func trimmingPrefixAndSuffixSpaces() -> String {
        // Through the contiguous bytes, not `UTF8View`'s generic index walk: every field of
        // every submission passes here.
        let trimmed: String? = withUTF8Bytes { bytes in
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
            var start = 0
            var end = bytes.count
            while start < end && isSpace(bytes[start]) { start += 1 }
            while end > start && isSpace(bytes[end - 1]) { end -= 1 }
            if start == 0 && end == bytes.count { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        return trimmed ?? self
    }
}

extension Int64 {
    /// `value` rounded toward zero and clamped to `Int64`'s range, `0` for NaN: a conversion
    /// that never traps, for times and amounts that come from stored rows or a clock.
    public init(clampingFinite value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9_223_372_036_854_775_808 {
            self = .max
        } else if value <= -9_223_372_036_854_775_808 {
            self = .min
        } else {
            self.init(value)
        }
    }
}
