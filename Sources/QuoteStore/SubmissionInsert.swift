public import Foundation
public import QuoteCore

/// What ``StoreTransaction/insertSubmission(idempotencyKey:by:_:)`` did: stored a new quote,
/// or found its idempotency key taken and stored nothing.
public enum SubmissionInsert: Sendable {
    /// Stored: the new quote in its priced state, and the two events of its submission.
    case inserted(Quote, events: [StoredEvent])
    /// Nothing stored: the quote submitted earlier under the same idempotency key.
    case existing(Quote)
}

extension StateChange {
    /// A new quote's first two steps, dated `at`: created as `submitted`, numbered `seq`,
    /// then priced to `status`, numbered `seq + 1`.
    public static func submission(pricedTo status: QuoteStatus, at: Date, seq: Int64) -> [StateChange] {
        [
            StateChange(from: nil, to: .submitted, at: at, seq: seq),
            StateChange(from: .submitted, to: status, at: at, seq: seq + 1),
        ]
    }
}
