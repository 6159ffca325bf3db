/// Why the domain refused a request: an invalid submission, a transition the state machine
/// does not allow, a mechanic who cannot do the work, and so on.
///
/// ``code`` is what programs branch on (its ``Code/description`` is the wire's snake_case
/// code); ``message`` is for people; ``problems`` lists every field-level issue at once.
public struct QuoteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of refusal. New kinds may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidSubmission = "invalid_submission"
            case illegalTransition = "illegal_transition"
            case cannotPerform = "cannot_perform"
            case mechanicBusy = "mechanic_busy"
            case noMechanicAvailable = "no_mechanic_available"
            case unresolved = "unresolved"
            case invalidResolution = "invalid_resolution"
            case unknownQuote = "unknown_quote"
            case unknownMechanic = "unknown_mechanic"
            case idempotencyConflict = "idempotency_conflict"
            case notInCatalog = "not_in_catalog"
            case duplicateMechanic = "duplicate_mechanic"
            case invalidCatalog = "invalid_catalog"
            case mechanicOffDuty = "mechanic_off_duty"
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The submission is incomplete or wrong; ``QuoteError/problems`` says where.
        public static let invalidSubmission = Code(.invalidSubmission)
        /// A well-formed submission names what the catalog cannot give it: a mechanic or coupon
        /// it does not have, a mechanic below the services' skill, or an expired coupon.
        /// ``QuoteError/problems`` says which. (No schema can know the catalog.)
        public static let notInCatalog = Code(.notInCatalog)
        /// The quote's state does not allow the requested change.
        public static let illegalTransition = Code(.illegalTransition)
        /// The mechanic's skill is below what the quote's services need.
        public static let cannotPerform = Code(.cannotPerform)
        /// The mechanic asked for is booked on another quote.
        public static let mechanicBusy = Code(.mechanicBusy)
        /// The mechanic asked for is off duty: booked by no one, and no line waits for them.
        public static let mechanicOffDuty = Code(.mechanicOffDuty)
        /// No free mechanic has the skill the quote needs.
        public static let noMechanicAvailable = Code(.noMechanicAvailable)
        /// A resolution left the quote still missing information and set no price.
        public static let unresolved = Code(.unresolved)
        /// A resolution named something unknown or gave an impossible value.
        public static let invalidResolution = Code(.invalidResolution)
        /// No quote has the given id.
        public static let unknownQuote = Code(.unknownQuote)
        /// No mechanic has the given name or id.
        public static let unknownMechanic = Code(.unknownMechanic)
        /// The idempotency key was used before for a different submission; nothing was applied.
        public static let idempotencyConflict = Code(.idempotencyConflict)
        /// A mechanic on the roster already has the name given to a new one.
        public static let duplicateMechanic = Code(.duplicateMechanic)
        /// A catalog cannot be put in force: it is invalid (``QuoteError/problems`` says where),
        /// or it changes the currency while quotes priced in the old one are open.
        public static let invalidCatalog = Code(.invalidCatalog)

        /// The snake_case code used on the wire, such as `illegal_transition`.
        public var description: String { base.rawValue }

        /// The code for a wire string, if it is one of ours.
        public init?(wire: String) {
            guard let base = Base(rawValue: wire) else { return nil }
            self.base = base
        }
    }

    /// What kind of refusal this is.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// Every field-level problem, when the refusal is about input.
    public let problems: [Problem]

    /// Creates an error.
    public init(_ code: Code, _ message: String, problems: [Problem] = []) {
        self.code = code
        self.message = message
        self.problems = QuoteLimits.capped(problems)
    }

    /// The refusal of a change from `from` to `to`, naming both states.
    public static func illegalTransition(from: QuoteStatus, to: QuoteStatus) -> QuoteError {
        QuoteError(.illegalTransition, "a \(from) quote cannot become \(to)")
    }

    /// A refusal of money arithmetic that would have trapped: amounts in two currencies (a
    /// quote priced before the catalog's currency changed) or a sum out of range.
    init(_ error: MoneyError) {
        self.init(.invalidResolution, "the quote cannot be priced: \(error.message)")
    }

    public var description: String {
        problems.isEmpty
            ? "\(code): \(message)"
            : "\(code): \(message): " + problems.map(\.description).joined(separator: "; ")
    }
}
