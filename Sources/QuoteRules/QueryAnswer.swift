public import QuoteCore
public import QuoteStore

/// What a read came to, in domain values: the reply encoder turns it into bytes.
public enum QueryAnswer: Sendable {
    /// One quote with its history (`get`).
    case quote(QuoteRecord)
    /// A page of quotes by id (`list`); `limit` is the number of rows asked of the store;
    /// `examinedThrough`, when the search stopped before filling the page, where
    /// (`QuotePage.examinedThrough`).
    case quotes([Quote], limit: Int, examinedThrough: QuoteID?)
    /// The roster with each mechanic's booking (`mechanics`).
    case mechanics([MechanicState])
    /// The catalog's services (`services`).
    case services([Service])
    /// The catalog in force, with its version (`catalog`).
    case catalog(Catalog)
    /// Counts over the whole store (`stats`).
    case stats(StoreState)
    /// The wait-list in line order; `truncated` when fewer rows were read than asked for.
    case waiting([Quote], truncated: Bool)
    /// Events after a `seq`; `truncated` when fewer rows were read than asked for, to bound
    /// the work of one request.
    case events([StoredEvent], lastSeq: Int64, truncated: Bool)
    /// The store answered with its last `seq`, or failed with the error (`ping`).
    case pong(Result<Int64, StoreError>)
    /// A retried submission's answer, as a write's would be.
    case written(Result<CommandOutcome, QuoteError>)
    /// Refused: the quote does not exist for this caller.
    case refused(QuoteError)
    /// The store could not be read; nothing is known.
    case storeFailed
}
