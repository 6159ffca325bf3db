public import QuoteCore

/// What ``StoreTransaction/insertSubmission(idempotencyKey:by:_:)`` did: stored a new quote,
/// or found its idempotency key taken and stored nothing.
public enum SubmissionInsert: Sendable {
    /// Stored: the new quote in its priced state, and the two events of its submission.
    case inserted(Quote, events: [StoredEvent])
    /// Nothing stored: the quote submitted earlier under the same idempotency key.
    case existing(Quote)
}
