public import QuoteCore
public import QuoteStore

/// What one successful command did.
public struct CommandOutcome: Sendable, Hashable {
    /// The quote after the command.
    public var quote: Quote
    /// The events the command appended, in order (none for an idempotent replay).
    public var events: [StoredEvent]
    /// Whether this was a repeated submission answered from the original.
    public var replayed: Bool
    /// Why `book: true` on a submission could not book, when it could not; the quote itself
    /// was still recorded.
    public var bookingError: QuoteError?
    /// When the command left the quote waiting: its place in line, 1 for the next served.
    public var waitPosition: Int?

    /// Creates an outcome.
    public init(
        quote: Quote, events: [StoredEvent], replayed: Bool = false, bookingError: QuoteError? = nil,
        waitPosition: Int? = nil
    ) {
        self.quote = quote
        self.events = events
        self.replayed = replayed
        self.bookingError = bookingError
        self.waitPosition = waitPosition
    }
}
