public import Foundation
public import QuoteCore

/// One open write transaction, as the rules see it: the few reads and writes that every use
/// case is made of, and nothing else. A store implements it with its own statements; the
/// rules (`QuoteRules`) decide what to call and in which order, so that every store applies
/// the same rules.
///
/// A transaction is used by one task, inside ``QuoteStore/write(_:)``, and never after it.
/// Every method throws ``StoreError`` only for a failure of the store itself, which aborts
/// the whole transaction; refusals are the rules' to decide.
public protocol StoreTransaction: AnyObject {
    /// The moment the transaction stands for: every change it makes is dated so.
    var now: Date { get }

    /// The quote `id` as committed or as changed earlier in this transaction; `nil` when there
    /// is none.
    func quote(_ id: QuoteID) async throws(StoreError) -> Quote?

    /// ``quote(_:)``, locked (where the store locks what it reads) only if its status is
    /// `status`: the command asking refuses a quote in any other, and so holds no lock on it.
    /// A quote waiting in line is then not passed over by another transaction serving the
    /// line because a command that refuses it looked at it.
    func quote(_ id: QuoteID, lockingIf status: QuoteStatus) async throws(StoreError) -> Quote?

    /// The quote submitted with `idempotencyKey`, if any.
    func quote(idempotencyKey: String) async throws(StoreError) -> Quote?

    /// Says which idempotency keys ``quote(idempotencyKey:)`` is about to be asked for, so
    /// that a store whose every statement is a round trip can read them all at once. Optional:
    /// the answers must be the same without it.
    func prefetch(idempotencyKeys: [String]) async throws(StoreError)

    /// A quote id never handed out before. An id taken by a command that is then undone
    /// (``rollbackToSavepoint()``) may be handed out again.
    func nextQuoteID() async throws(StoreError) -> QuoteID

    /// Stores a new submission unless a quote already holds `idempotencyKey`: one step, so
    /// that a store whose unique index finds the key taken need not look for it first.
    ///
    /// `make` is given a quote id never handed out before and returns the quote as submitted
    /// and as priced (same id). The priced quote is stored, under `idempotencyKey` when given,
    /// with the two events of its submission, caused `by` whom: `quote.submitted`, then its
    /// priced state. When the key is taken, nothing is stored and the quote that holds the key
    /// is returned; `make` may have been called all the same, its quotes then dropped and its
    /// id handed out again. A store may also find the key taken only later in the transaction,
    /// and then fail it and run it again (``QuoteStore/write(_:)``).
    func insertSubmission(
        idempotencyKey: String?, by: String?, _ make: (QuoteID) -> (submitted: Quote, priced: Quote)
    ) async throws(StoreError) -> SubmissionInsert

    /// Stores `quote` in place of its current version and appends `step` to its history. A
    /// waiting quote joins the end of the line as of `step`; one that stops waiting leaves it.
    func update(_ quote: Quote, step: StateChange) async throws(StoreError)

    /// Claims the first free, active, on-duty mechanic with at least `minimumSkill` in
    /// `QuoteCore.DispatchOrder` for `quote`, other than `excluding`; `nil`, changing nothing,
    /// when there is none.
    /// The pick and the claim are one atomic step: no other transaction can claim the same
    /// mechanic in between.
    func claimFirstFree(
        minimumSkill: Skill, for quote: QuoteID, excluding: MechanicID?
    ) async throws(StoreError) -> Mechanic?

    /// Claims `mechanic` for `quote` if they are free, active, on duty and have at least
    /// `minimumSkill`; `false`, changing nothing, otherwise.
    func claim(_ mechanic: MechanicID, minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Bool

    /// Frees `mechanic` if `quote` holds them, from ``now`` on; `false`, changing nothing,
    /// otherwise.
    func release(_ mechanic: MechanicID, from quote: QuoteID) async throws(StoreError) -> Bool

    /// The oldest waiting quote (in the order they started waiting) that `mechanic` can serve:
    /// its work needs at most their skill, and it waits for anyone or for them; `nil` when
    /// there is none.
    func oldestWaiting(servableBy mechanic: Mechanic) async throws(StoreError) -> Quote?

    /// Takes the wait-list's lock, held until the transaction ends, before any row is read:
    /// in a transaction that may put a quote in line or free a mechanic (who then serves the
    /// line). Where transactions run at once (several daemons on one database), one may free
    /// a mechanic while another, which cannot see that yet, puts a quote in line: each misses
    /// the other, and the quote waits while the mechanic is free. Under the lock the later of
    /// the two waits for the earlier's commit, and then sees it.
    ///
    /// Transactions that only free mechanics share the lock; one that `mayPutInLine` holds it
    /// alone. Nothing where transactions run one at a time.
    func lockWaitList(mayPutInLine: Bool) async throws(StoreError)

    /// The quotes waiting for `mechanic` by name, in line order, as committed or changed
    /// earlier in this transaction (read each with ``quote(_:)``: one may have stopped
    /// waiting since).
    func quotesWaiting(for mechanic: MechanicID) async throws(StoreError) -> [QuoteID]

    /// The place in line of the waiting quote `quote`: 1 for the next served.
    func waitPosition(of quote: QuoteID) async throws(StoreError) -> Int

    /// Every free, active mechanic on duty, in `QuoteCore.DispatchOrder`.
    func freeMechanics() async throws(StoreError) -> [Mechanic]

    /// Puts `mechanic` on or off duty; `false`, changing nothing, when they already were so
    /// or are not active. Off duty, they are never claimed (``claim(_:minimumSkill:for:)``,
    /// ``claimFirstFree(minimumSkill:for:)``, ``freeMechanics()``); a claim they hold stays.
    func setDuty(_ mechanic: MechanicID, onDuty: Bool) async throws(StoreError) -> Bool

    /// Whether `mechanic` is on duty, as this transaction sees it; `nil` when they are not
    /// on the roster (retired, or never were).
    func isOnDuty(_ mechanic: MechanicID) async throws(StoreError) -> Bool?

    /// Moves the waiting quote `quote`, just put in line by ``update(_:step:)``, to the front
    /// of the line: the next served by anyone able.
    func putFirstInLine(_ quote: QuoteID) async throws(StoreError)

    /// The number of the stored catalog as this transaction sees it. With `forChange`, every
    /// other transaction's change to the catalog waits from here until this one ends, so that
    /// each change applies to the one before it.
    func catalogVersion(forChange: Bool) async throws(StoreError) -> Int64

    /// The stored catalog as this transaction sees it, with its version.
    func catalog() async throws(StoreError) -> Catalog

    /// The id after every mechanic's, present or retired: one no mechanic ever had. `nil`
    /// when there is none (the largest possible is taken).
    func nextMechanicID() async throws(StoreError) -> MechanicID?

    /// Adds `mechanic` to the roster: active, on duty, free.
    func addMechanic(_ mechanic: Mechanic) async throws(StoreError)

    /// Sets the skill of `mechanic`, who is active.
    func updateMechanic(_ mechanic: MechanicID, skill: Skill) async throws(StoreError)

    /// Takes `mechanic` off the roster: never claimed again; a claim they hold stays.
    func retireMechanic(_ mechanic: MechanicID) async throws(StoreError)

    /// Replaces the stored services, coupons and roster with `catalog`'s: mechanics it does
    /// not list are retired, those it lists keep their claim and duty.
    func replaceCatalog(_ catalog: Catalog) async throws(StoreError)

    /// Records `catalog`'s version as the stored catalog's, after the changes that made it.
    func recordCatalog(_ catalog: Catalog) async throws(StoreError)

    /// Whether any quote is neither completed nor cancelled.
    func hasOpenQuotes() async throws(StoreError) -> Bool

    /// Appends `changes`, caused `by` whom (see ``StoredEvent/by``), to the event log, in
    /// order, numbering them after every event before them, with no gap; returns them as logged.
    /// A store may hand out numbers relative to the transaction and fix them at its commit:
    /// the numbers in the log are these plus ``Committed/sequenceOffset``, and so are the
    /// steps of ``insertSubmission(idempotencyKey:by:_:)`` and ``update(_:step:)``.
    func append(_ changes: [StoredEvent.Kind], by: String?) async throws(StoreError) -> [StoredEvent]

    /// Opens a savepoint, nested in any already open: what follows can be undone on its own.
    func savepoint() async throws(StoreError)

    /// Undoes everything since the innermost open savepoint, its event numbers and quote ids
    /// included, and closes it. The transaction goes on.
    func rollbackToSavepoint() async throws(StoreError)

    /// Closes the innermost open savepoint, keeping what was done since.
    func releaseSavepoint() async throws(StoreError)
}

extension StoreTransaction {
    /// Claims the first free, active, on-duty mechanic with at least `minimumSkill` for
    /// `quote`; see ``claimFirstFree(minimumSkill:for:excluding:)``.
    public func claimFirstFree(minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Mechanic? {
        try await claimFirstFree(minimumSkill: minimumSkill, for: quote, excluding: nil)
    }

    /// Nothing: a store whose look-ups are cheap reads each key when asked.
    public func prefetch(idempotencyKeys: [String]) async throws(StoreError) {}

    /// ``quote(_:)``: the store's transactions run one at a time, and it locks nothing.
    public func quote(_ id: QuoteID, lockingIf status: QuoteStatus) async throws(StoreError) -> Quote? {
        try await quote(id)
    }

    /// No lock: the store's transactions run one at a time.
    public func lockWaitList(mayPutInLine: Bool) async throws(StoreError) {}
}
