/// One thing wrong with an input, located by a field path such as `customer.email` or
/// `services[2]`, with a sentence a person can act on.
public struct Problem: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Where the problem is: a dotted path into the input, with `[n]` for list positions.
    public var field: String
    /// What is wrong, for people.
    public var message: String

    /// Creates a problem report.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}
