public import Foundation
public import QuoteCore

/// Durable storage of quotes, mechanics' claims and the event log.
///
/// Every implementation keeps the same promises, whatever the races between clients or
/// daemons: a command is applied entirely or not at all; a mechanic is held by at most one
/// quote, claimed by one conditional write whose affected rows are checked; every change
/// appends its events in the same transaction (outbox), numbered gap-free; and a result is
/// returned only after its transaction is durable.
///
/// The SQLite store (`QuoteStoreSQLite`) serves one host; a PostgreSQL store for several
/// daemons would claim with `FOR UPDATE SKIP LOCKED` behind this same protocol.
public protocol QuoteStore: Sendable {
    /// The catalog commands are validated and priced against.
    var currentCatalog: Catalog { get }

    /// Replaces the catalog (e.g. on reload) and syncs what the store keeps of it.
    func updateCatalog(_ catalog: Catalog) throws(StoreError)

    /// Applies `commands` in one transaction and reports each one's result in order.
    ///
    /// A refused command leaves no trace and does not fail the others. Throws only when the
    /// batch as a whole could not be committed, in which case nothing of it was applied.
    func apply(_ commands: [StoreCommand]) throws(StoreError) -> [Result<CommandOutcome, QuoteError>]

    /// A quote and its state history, oldest first; `nil` if there is no such quote.
    func quote(_ id: QuoteID) throws(StoreError) -> QuoteRecord?

    /// Quotes in `status` (all when `nil`), by increasing id after `afterID`, at most `limit`.
    func quotes(status: QuoteStatus?, afterID: QuoteID?, limit: Int) throws(StoreError) -> [Quote]

    /// Every active mechanic with what holds them.
    func mechanics() throws(StoreError) -> [MechanicState]

    /// How many quotes are in each state.
    func counts() throws(StoreError) -> [QuoteStatus: Int]

    /// Events with `seq` greater than `after`, in order, at most `limit`.
    func events(after: Int64, limit: Int) throws(StoreError) -> [StoredEvent]

    /// The sequence number of the last event, 0 when the log is empty.
    func lastSequence() throws(StoreError) -> Int64

    /// Deletes old events within what the retention promises; returns how many went.
    @discardableResult
    func pruneEvents(now: Date) throws(StoreError) -> Int

    /// Every breach of the booking invariant: a booked quote must hold its mechanic and a busy
    /// mechanic must belong to a booked quote.
    func integrityViolations() throws(StoreError) -> [IntegrityViolation]

    /// Repairs what ``integrityViolations()`` reports, logging each change as events; only on
    /// an operator's explicit command.
    @discardableResult
    func repairIntegrity() throws(StoreError) -> [IntegrityViolation]
}

/// A quote with its history.
public struct QuoteRecord: Sendable, Hashable {
    /// The quote now.
    public var quote: Quote
    /// Each state it went through, oldest first.
    public var history: [StateChange]

    /// Creates a record.
    public init(quote: Quote, history: [StateChange]) {
        self.quote = quote
        self.history = history
    }
}

/// One step of a quote's history.
public struct StateChange: Sendable, Hashable, Codable {
    /// The state before (`nil` when created).
    public var from: QuoteStatus?
    /// The state after.
    public var to: QuoteStatus
    /// When it happened.
    public var at: Date
    /// The event that announced it.
    public var seq: Int64

    /// Creates a step.
    public init(from: QuoteStatus?, to: QuoteStatus, at: Date, seq: Int64) {
        self.from = from
        self.to = to
        self.at = at
        self.seq = seq
    }
}

/// A mechanic and whether, and by which quote, they are held.
public struct MechanicState: Sendable, Hashable {
    public var mechanic: Mechanic
    /// The quote holding them; `nil` when free.
    public var quote: QuoteID?
    /// Since when they have been free; `nil` when busy.
    public var freeSince: Date?

    /// Creates a state.
    public init(mechanic: Mechanic, quote: QuoteID?, freeSince: Date?) {
        self.mechanic = mechanic
        self.quote = quote
        self.freeSince = freeSince
    }

    /// Whether they are free.
    public var isFree: Bool { quote == nil }
}

/// A breach of the booking invariant found by the startup check.
public struct IntegrityViolation: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for the operator.
    public var message: String
    /// The quote concerned, if any.
    public var quote: QuoteID?
    /// The mechanic concerned, if any.
    public var mechanic: MechanicID?

    /// Creates a violation.
    public init(message: String, quote: QuoteID?, mechanic: MechanicID?) {
        self.message = message
        self.quote = quote
        self.mechanic = mechanic
    }

    public var description: String { message }
}
