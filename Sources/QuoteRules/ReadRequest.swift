public import QuoteCore

/// A request answered from committed state rather than written: what a batch's reads are.
public struct ReadRequest: Sendable, Hashable {
    /// What is read.
    public enum Kind: Sendable, Hashable {
        /// A query.
        case query(ReadQuery)
        /// A submission refused by its checks that carries an idempotency key: answered with
        /// the quote submitted under that key, if there is one, else with the refusal.
        case replay(idempotencyKey: String, digest: SubmissionDigest, refusal: QuoteError)
    }

    /// What is read.
    public var kind: Kind
    /// Who asks: which quotes they reach.
    public var actor: Actor

    /// The read of `kind` asked `by` actor.
    public init(_ kind: Kind, by actor: Actor) {
        self.kind = kind
        self.actor = actor
    }

    /// Whether answering reads many rows (see ``ReadQuery/readsManyRows``).
    public var readsManyRows: Bool {
        if case .query(let query) = kind { query.readsManyRows } else { false }
    }
}
