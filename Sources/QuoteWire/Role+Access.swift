extension Role {
    /// How far a role reaches with one operation.
    public enum Access: Sendable, Hashable {
        /// Refused with `forbidden`, nothing applied.
        case denied
        /// Allowed, on every quote.
        case granted
        /// Allowed on the quotes submitted under the caller's own certificate; any other
        /// quote is answered as `unknown_quote`, so that it does not even show it exists.
        case ownQuotes
    }

    /// Who may do what: every role, every operation, and the event stream, in one table.
    /// An operation missing from a role's row is denied.
    public static let table: [Role: (operations: [Operation: Access], subscribe: Bool)] = [
        .operator: (
            operations: Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0, .granted) }), subscribe: true
        ),
        // Support staff answer customers and keep the day running: everything read, the
        // stream, the changes a quote needs from them, moving bookings and mechanics' duty;
        // not submitting for a customer, nor completing work.
        .support: (
            operations: Dictionary(
                uniqueKeysWithValues: Operation.allCases.filter { !$0.isWrite }.map { ($0, .granted) }
                    + [
                        (.resolve, .granted), (.book, .granted), (.cancel, .granted), (.reassign, .granted),
                        (.setDuty, .granted),
                    ]),
            subscribe: true
        ),
        .client: (
            operations: [
                .submit: .granted, .get: .ownQuotes, .book: .ownQuotes, .cancel: .ownQuotes, .services: .granted,
                .ping: .granted,
            ],
            subscribe: false
        ),
        .observer: (
            operations: Dictionary(
                uniqueKeysWithValues: Operation.allCases.filter { !$0.isWrite }.map { ($0, .granted) }),
            subscribe: true
        ),
    ]

    /// How far this role reaches with `operation`.
    public func access(to operation: Operation) -> Access {
        Self.table[self]?.operations[operation] ?? .denied
    }

    /// Whether keys of this role may subscribe to the event stream: it carries every
    /// customer's details, so only those who may read every quote.
    public var maySubscribe: Bool {
        Self.table[self]?.subscribe ?? false
    }
}
