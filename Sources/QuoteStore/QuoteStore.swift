public import Foundation
public import QuoteCore

/// Durable storage of quotes, mechanics' claims and the event log, behind an async boundary
/// so that a store built on an async client fits as well as one built on a blocking one.
///
/// A store holds data, not rules: every change goes through ``write(_:)``, whose body (the
/// rules in `QuoteRules`) works through the narrow ``StoreTransaction``. Every implementation
/// keeps the same promises, whatever the races between clients or daemons: a transaction is
/// applied entirely or not at all; a mechanic is held by at most one quote, claimed by one
/// conditional write whose affected rows are checked; events are appended in the same
/// transaction as the change they announce (outbox), numbered gap-free; and `write` returns
/// only after its transaction is durable. The store contract suite checks each promise.
public protocol QuoteStore: Sendable {
    /// Where the store's transactions run, when on a thread of its own: a caller that runs
    /// its loop there (with this executor preference) reaches ``write(_:)`` without a thread
    /// hop. `nil` for a store built on an async client, which needs no thread.
    var executor: (any TaskExecutor)? { get }

    /// Runs `body` in one write transaction and commits it, durably, before returning what
    /// `body` returned, with the offset that turns the event numbers it was handed into their
    /// numbers in the log (see ``StoreTransaction/append(_:by:)``). When `body` throws, or the
    /// commit fails, nothing of it is applied.
    ///
    /// What `body` is told is final only once the commit is: a store may roll a transaction
    /// back and run `body` again in a new one (the SQLite store does when a key it assumed
    /// free proves taken). So `body` changes nothing outside its transaction.
    ///
    /// Transactions are serialized: on one store, one `body` runs at a time, and a store
    /// shared by several processes serializes them with its database's locks.
    func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T>

    /// Puts `catalog` in force as the stored catalog's next version, outside the rules and
    /// with no event (tools and tests; a running daemon applies a catalog through the rules):
    /// listed mechanics are added or updated and keep their claims; those no longer listed
    /// are retired, so that they are never picked again.
    func syncCatalog(_ catalog: Catalog) async throws(StoreError)

    /// The catalog in force: the store's, with its version. A store is seeded with one when
    /// opened.
    func catalog() async throws(StoreError) -> Catalog

    /// The version of the catalog in force: what tells a daemon, cheaply, that another changed
    /// it (by default, read with the whole catalog).
    func catalogVersion() async throws(StoreError) -> Int64

    /// A quote and its state history, oldest first; `nil` if there is no such quote.
    func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord?

    /// The quote submitted with `idempotencyKey`, if any.
    func quote(idempotencyKey: String) async throws(StoreError) -> Quote?

    /// Quotes in `status` (all when `nil`) of the customers `customer` finds (all when `nil`),
    /// by increasing id after `afterID`, at most `limit`. A customer's quotes are found
    /// through an index.
    ///
    /// The search's work is bounded whatever the store holds: it examines at most `examining`
    /// quotes. A name prefix that at most `examining` quotes match in all is read whole through
    /// its index; one that more match is searched in id order (through the state's index with
    /// a `status`), and so is an email address with a `status`. Such a search's page can end
    /// before `limit`, and then says where it stopped.
    func quotes(
        status: QuoteStatus?, customer: CustomerSearch?, afterID: QuoteID?, limit: Int, examining: Int
    ) async throws(StoreError) -> QuotePage

    /// The waiting quotes in line order (the next served first), at most `limit`.
    func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote]

    /// Since when the quote that has waited longest has waited, wherever it is in line (a
    /// reassigned quote goes first in line but has waited least); `nil` when none waits.
    func longestWaitingSince() async throws(StoreError) -> Date?

    /// Every active mechanic with what holds them and whether they are on duty.
    func mechanics() async throws(StoreError) -> [MechanicState]

    /// How many of ``mechanics()`` are busy, free and on duty, and off duty, counted in the
    /// store.
    func mechanicCounts() async throws(StoreError) -> MechanicCounts

    /// How many quotes are in each state.
    func counts() async throws(StoreError) -> [QuoteStatus: Int]

    /// Events with `seq` greater than `after`, in order, at most `limit`.
    func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent]

    /// The sequence number of the last event, 0 when the log is empty.
    func lastSequence() async throws(StoreError) -> Int64

    /// Deletes old events within what the retention promises, the oldest first and at most
    /// `limit` rows, in one transaction; returns how many events went (a row may hold two).
    /// It never deletes a new quote's `quote.submitted` row without the row after it.
    /// (``pruneEvents(now:batch:)`` prunes them all, a batch at a time.)
    @discardableResult
    func pruneEvents(now: Date, limit: Int) async throws(StoreError) -> Int

    /// Every breach of the booking invariant: a booked quote must hold its mechanic and a busy
    /// mechanic must belong to a booked quote.
    func integrityViolations() async throws(StoreError) -> [IntegrityViolation]

    /// Whether other processes write to this store too (several daemons on one database):
    /// their events reach this one only through the log (``events(after:limit:)``).
    var isShared: Bool { get }

    /// How often the store lost its database server and moved to another, and for how long it
    /// had none; always zero for a store that has no server.
    var availability: StoreAvailability { get }

    /// Calls `hint` whenever another process may have appended events, until cancelled: a
    /// hint only, which may come late, twice or not at all (a reader polls as well). Returns at
    /// once for a store no other process writes.
    func watchAppends(_ hint: @escaping @Sendable () -> Void) async
}

extension QuoteStore {
    /// No thread of its own.
    public var executor: (any TaskExecutor)? { nil }

    public func catalogVersion() async throws(StoreError) -> Int64 { try await catalog().version }

    /// One process only.
    public var isShared: Bool { false }

    /// No server to lose.
    public var availability: StoreAvailability { StoreAvailability() }

    /// Nothing to watch: no other process writes.
    public func watchAppends(_ hint: @escaping @Sendable () -> Void) async {}

    /// Deletes every old event within what the retention promises, `batch` rows a transaction
    /// (``EventRetention/pruneBatch``), so that a backlog never holds the writer (and every
    /// commit behind it) for longer than one batch takes; returns how many events went.
    @discardableResult
    public func pruneEvents(now: Date, batch: Int = EventRetention.pruneBatch) async throws(StoreError) -> Int {
        var pruned = 0
        while true {
            // Until a transaction finds nothing: a batch's rows may hold more events than it has
            // rows, or end one row short of its size (a pair is never split).
            let events = try await pruneEvents(now: now, limit: batch)
            guard events > 0 else { return pruned }
            pruned += events
        }
    }

    /// Quotes in `status` (all when `nil`), by increasing id after `afterID`, at most `limit`:
    /// every quote examined is one found, so the page is never cut short.
    public func quotes(status: QuoteStatus?, afterID: QuoteID?, limit: Int) async throws(StoreError) -> [Quote] {
        try await quotes(status: status, customer: nil, afterID: afterID, limit: limit, examining: limit).quotes
    }
}

/// What a committed write transaction returned.
public struct Committed<Value: Sendable>: Sendable {
    /// What the transaction's body returned.
    public var value: Value
    /// What to add to each event number the transaction handed out (in its events and its
    /// quotes' steps) for the number it has in the log: 0 for a store that numbers events
    /// for good as they are appended, the start of the block taken at commit for one that
    /// numbers them then (PostgreSQL, where several daemons append).
    public var sequenceOffset: Int64

    /// Creates the result of a commit.
    public init(_ value: Value, sequenceOffset: Int64 = 0) {
        self.value = value
        self.sequenceOffset = sequenceOffset
    }
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
    /// Whether they take new bookings.
    public var onDuty: Bool

    /// Creates a state.
    public init(mechanic: Mechanic, quote: QuoteID?, freeSince: Date?, onDuty: Bool = true) {
        self.mechanic = mechanic
        self.quote = quote
        self.freeSince = freeSince
        self.onDuty = onDuty
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

    public var description: String { message }

    /// A booked quote whose mechanic is not held by it (or that has none): what both stores
    /// report for such a row.
    public static func bookedWithoutMechanic(quote: Int64, mechanic: Int64?) -> IntegrityViolation {
        IntegrityViolation(
            message: "booked quote \(quote) does not hold its mechanic \(mechanic.map { "\($0)" } ?? "(none)")",
            quote: QuoteID(quote), mechanic: mechanic.map(MechanicID.init))
    }

    /// A mechanic held by a quote that is not booked with them: what both stores report for
    /// such a row.
    public static func heldWithoutBooking(mechanic: Int64, quote: Int64) -> IntegrityViolation {
        IntegrityViolation(
            message: "mechanic \(mechanic) is held by quote \(quote), which is not booked with them",
            quote: QuoteID(quote), mechanic: MechanicID(mechanic))
    }
}
