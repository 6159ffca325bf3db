public import QuoteCore

/// Who a command is applied for: whose name the audit trail records (the quote's
/// `submittedBy`, each event's `by`) and, for a caller whose role reaches only its own
/// quotes, which quotes it can see and act on.
public struct Actor: Sendable, Hashable {
    /// The name recorded: a client certificate's name (or key); `nil` for a caller the daemon
    /// did not authenticate.
    public var name: String?
    /// Whether only quotes submitted under ``name`` exist for this caller: any other is
    /// answered as an unknown quote, so that another's quote does not even show it exists.
    public var ownQuotesOnly: Bool

    /// An actor named `name`, reaching every quote unless `ownQuotesOnly`.
    public init(name: String?, ownQuotesOnly: Bool = false) {
        self.name = name
        self.ownQuotesOnly = ownQuotesOnly
    }

    /// A caller nobody authenticated (quoted without `security`), reaching every quote.
    public static let anonymous = Actor(name: nil)

    /// The daemon itself, for work no request asked for: the wait-list served at start-up
    /// or after a reload, repairs.
    public static let daemon = Actor(name: "quoted")

    /// Whether `quote` exists for this actor.
    public func reaches(_ quote: Quote) -> Bool {
        !ownQuotesOnly || quote.submittedBy == name
    }

    /// The idempotency key as stored: an authenticated caller's keys are its own, so that
    /// two clients choosing the same key neither collide nor see each other's quote.
    /// Prefixed with the name's length, so that no name and key can spell another's.
    public func storedIdempotencyKey(_ key: String) -> String {
        guard let name else { return key }
        return "\(name.utf8.count):\(name)/\(key)"
    }
}
