/// The bounds on what one request or catalog entry may hold, so that the work and the memory a
/// request costs are linear in its size and bounded, and every total fits in 64-bit cents.
/// `docs/protocol.md` and `docs/schema` state the same numbers.
public enum QuoteLimits {
    /// Services in one submission or resolution.
    public static let maximumServices = 32
    /// Characters (Unicode scalars) in a name, code or other short text field.
    public static let maximumTextLength = 256
    /// Characters in `customer.address` and a cancellation's `reason`.
    public static let maximumLongTextLength = 1_024
    /// Bytes in an idempotency key (and at least one), each printable ASCII.
    public static let maximumIdempotencyKeyBytes = 255
    /// Problems listed in one refusal; the message says how many there were in all.
    public static let maximumProblems = 16
    /// Characters of a caller's value quoted back in a problem's message.
    public static let maximumEchoLength = 64

    /// `value` as quoted back in a message: at most ``maximumEchoLength`` characters, with an
    /// ellipsis when cut, so that a refusal is never much larger than what was sent.
    public static func echo(_ value: String) -> String {
        var scalars = value.unicodeScalars.makeIterator()
        var echoed = String.UnicodeScalarView()
        for _ in 0..<maximumEchoLength {
            guard let next = scalars.next() else { return String(echoed) }
            echoed.append(TextHygiene.isForbidden(next) ? "\u{FFFD}" : next)
        }
        return scalars.next() == nil ? String(echoed) : String(echoed) + "…"
    }

    /// Problems as listed in a refusal: the first ``maximumProblems``, then one saying how
    /// many more there were.
    public static func capped(_ problems: [Problem]) -> [Problem] {
        guard problems.count > maximumProblems else { return problems }
        return Array(problems.prefix(maximumProblems - 1)) + [
            Problem(field: "problems", message: "\(problems.count - maximumProblems + 1) more not listed")
        ]
    }
}
