public import QuoteCore
public import QuoteStore

/// What one successful command did.
public struct CommandOutcome: Sendable, Hashable {
    /// The quote after the command; `nil` for a command on a mechanic that booked no quote.
    public var quote: Quote?
    /// The events the command appended, in order (none for an idempotent replay).
    public var events: [StoredEvent]
    /// Whether this was a repeated submission answered from the original.
    public var replayed: Bool
    /// Why `book: true` on a submission could not book, when it could not; the quote itself
    /// was still recorded.
    public var bookingError: QuoteError?
    /// When the command left the quote waiting: its place in line, 1 for the next served.
    public var waitPosition: Int?
    /// The mechanic a change of duty concerned, and whether they are now on duty.
    public var duty: Duty?
    /// The mechanic a change of the roster concerned, as they are after it.
    public var mechanic: Mechanic?
    /// The version of the catalog a change of the catalog put in force.
    public var catalogVersion: Int64?

    /// A mechanic and whether they are on duty.
    public struct Duty: Sendable, Hashable {
        public var mechanic: Mechanic
        public var onDuty: Bool
    }

    /// Creates an outcome.
    public init(
        quote: Quote?, events: [StoredEvent], replayed: Bool = false, bookingError: QuoteError? = nil,
        waitPosition: Int? = nil, duty: Duty? = nil, mechanic: Mechanic? = nil, catalogVersion: Int64? = nil
    ) {
        self.duty = duty
        self.mechanic = mechanic
        self.catalogVersion = catalogVersion
        self.quote = quote
        self.events = events
        self.replayed = replayed
        self.bookingError = bookingError
        self.waitPosition = waitPosition
    }
}
