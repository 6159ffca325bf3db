public import QuoteCore

/// Where a command goes once checked against a catalog, before any transaction
/// (``Rulebook/admit(_:in:at:by:)``): into the batch's writes, to the store as a read, or
/// back refused.
public enum Admission: Sendable, Hashable {
    /// Passed every check that needs no stored state: a write for the batch's transaction.
    case write(CheckedRequest)
    /// A submission refused by its checks that carries an idempotency key: it may be a retry
    /// of one valid when first sent, which the store knows, so it is answered by `read`
    /// (a ``ReadRequest/Kind/replay(idempotencyKey:digest:refusal:)``), else with `refusal`.
    case replay(ReadRequest, refusal: QuoteError)
    /// Refused.
    case refused(QuoteError)
}
