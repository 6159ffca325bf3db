public import Foundation

extension KeyedDecodingContainer {
    /// An integer field as JSON Schema reads one: any whole number, however it is written
    /// (`100`, `100.0`, `1e2`); `nil` when absent or `null`. A fraction or a value beyond 64 bits
    /// throws as a number of the wrong type would.
    public func decodeWholeNumberIfPresent(forKey key: Key) throws -> Int64? {
        do {
            return try decodeIfPresent(Int64.self, forKey: key)
        } catch let error as DecodingError {
            guard let number = try? decodeIfPresent(Decimal.self, forKey: key),
                let whole = Int64(exactlyWhole: number)
            else { throw error }
            return whole
        }
    }
}

extension Int64 {
    /// `number` if it is whole and within 64 bits.
    public init?(exactlyWhole number: Decimal) {
        var rounded = Decimal()
        var source = number
        NSDecimalRound(&rounded, &source, 0, .plain)
        guard rounded == number else { return nil }
        let value = (number as NSDecimalNumber).int64Value
        guard Decimal(value) == number else { return nil }
        self = value
    }
}
