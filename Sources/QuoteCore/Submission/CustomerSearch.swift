/// How support finds a customer's quotes: by their email address, exactly but for case, or by
/// the start of their name, but for case.
///
/// The text decides which: with an `@` it is an email address, otherwise a name prefix. Stores
/// keep each quote's ``key(_:)`` of both, indexed, so either finds its quotes without a scan.
public enum CustomerSearch: Sendable, Hashable {
    /// Quotes whose customer's email address is this one, compared in ``key(_:)`` form.
    case email(String)
    /// Quotes whose customer's name starts with this, compared in ``key(_:)`` form.
    case namePrefix(String)

    /// The search `text` asks for; `nil` for blank text (empty, or spaces only), which
    /// finds no one's quotes in particular.
    public init?(_ text: String) {
        guard !text.isBlank else { return nil }
        let key = Self.key(text)
        self = key.utf8.contains(UInt8(ascii: "@")) ? .email(key) : .namePrefix(key)
    }

    /// The form names and addresses are stored and compared in: lowercased, so that
    /// `Jane@Example.com` finds `jane@example.com`.
    public static func key(_ text: String) -> String {
        text.asciiFastLowercased
    }
}
