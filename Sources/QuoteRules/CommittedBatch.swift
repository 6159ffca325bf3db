public import QuoteCore

/// What the store made of a ``RequestBatch``: a result per write and an answer per read, in
/// domain values only, for the side that received the requests to answer them.
public struct CommittedBatch<Ticket: Sendable>: Sendable {
    /// The batch, as it was received.
    public var batch: RequestBatch<Ticket>
    /// One result per write, in order; `nil` when the store failed and applied nothing, or
    /// failed while committing (``writesMayHaveApplied``).
    public var writeResults: [Result<CommandOutcome, QuoteError>]?
    /// The store failed while committing the writes: they may have been applied after all
    /// (`StoreError.outcomeUnknown`).
    public var writesMayHaveApplied: Bool
    /// One answer per read, in order.
    public var readResults: [QueryAnswer]

    /// The outcome of `batch`.
    public init(
        batch: RequestBatch<Ticket>, writeResults: [Result<CommandOutcome, QuoteError>]?, readResults: [QueryAnswer],
        writesMayHaveApplied: Bool = false
    ) {
        self.batch = batch
        self.writeResults = writeResults
        self.readResults = readResults
        self.writesMayHaveApplied = writeResults == nil && writesMayHaveApplied
    }
}
