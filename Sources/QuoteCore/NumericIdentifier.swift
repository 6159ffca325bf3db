/// An identifier the store assigns as a number: ordered, printed and coded as that number
/// alone, and typed, so that a quote's id is never taken for a mechanic's.
public protocol NumericIdentifier: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The numeric identifier.
    var rawValue: Int64 { get }

    /// Wraps a numeric identifier.
    init(_ rawValue: Int64)
}

extension NumericIdentifier {
    public var description: String { "\(rawValue)" }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
