public import QuoteCore

/// A change to apply through the store. The store applies a batch of them in one transaction
/// (group commit); each succeeds or fails on its own.
public enum StoreCommand: Sendable, Hashable {
    /// Validate and record a submission, price it, and with `book` claim a mechanic at once.
    /// The same `idempotencyKey` again returns the original quote and creates nothing.
    case submit(Submission, idempotencyKey: String?, book: Bool)
    /// Fill a pending quote's missing information and/or set its price.
    case resolve(QuoteID, Resolution)
    /// Book a ready quote: with `mechanic` (a name), that one or an error; without, the
    /// dispatch policy's choice, preferring the customer's mechanic.
    case book(QuoteID, mechanic: String?)
    /// Complete a booked quote, issue its receipt and free its mechanic.
    case complete(QuoteID)
    /// Cancel a quote that is not completed, freeing its mechanic if it had one.
    case cancel(QuoteID, reason: String?)
}

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

    /// Creates an outcome.
    public init(quote: Quote, events: [StoredEvent], replayed: Bool = false, bookingError: QuoteError? = nil) {
        self.quote = quote
        self.events = events
        self.replayed = replayed
        self.bookingError = bookingError
    }
}
