import Foundation
import Logging
import PostgresNIO
import QuoteCore
import QuoteStore
import QuoteStoreCodec

/// One write transaction on a PostgreSQL connection, as the rules see it: SQL only.
///
/// Several daemons write at once, so every row the rules decide on is locked as it is read:
/// a quote with `FOR UPDATE` (a second daemon's transaction waits, then reads the committed
/// state), a free mechanic or a waiting quote with `SKIP LOCKED` (a racing daemon takes the
/// next candidate instead of waiting). A transaction that may put a quote in line or free a
/// mechanic first takes the wait-list's lock (``lockWaitList(mayPutInLine:)``).
///
/// Event sequence numbers come from the one counters row, and only at the end: the
/// transaction numbers its events 1, 2, 3... as it goes, and ``finish()`` takes a block from
/// the counters row (locking it until the commit), then writes the quotes and events it kept
/// back with their numbers in the log. Number order is commit order, a rollback hands the
/// numbers back, and two daemons' transactions overlap in everything but those last
/// statements and the commit. Quote ids come from a sequence instead, in blocks
/// (``QuoteIDBlocks``): they are unique, not gap-free.
final class PostgresTransaction: StoreTransaction {
    let connection: PostgresConnection
    let now: Date
    let nowMilliseconds: Int64
    /// The catalog's currency, recorded with each new quote; a catalog applied in the
    /// transaction changes it.
    private(set) var currency: Currency
    /// The latest catalog version this transaction read or recorded, with its currency.
    private(set) var recordedCatalog: (version: Int64, currency: Currency)?
    let logger: Logger
    private let quoteIDs: QuoteIDBlocks
    /// Who commits, named in the notification: a daemon need not read its own commits back.
    private let instance: String
    /// The last number handed out in this transaction; its final number is this plus the
    /// block's start (``sequenceOffset``).
    private var lastSeq: Int64 = 0
    /// Quote ids taken, for handing them back when their command is undone.
    private var takenIDs: [Int64] = []
    private var savepoints: [Savepoint] = []
    /// The committed history of each quote read, for the update that usually follows.
    private var loaded: [Int64: Data] = [:]
    /// What the transaction will write at its end, in one statement (``BatchStatements``):
    /// postgres-nio sends one statement per round trip, and a row per statement would make a
    /// batch of a thousand submissions thousands of round trips.
    private var pending = Pending()
    /// Idempotency keys read ahead (``prefetch(idempotencyKeys:)``): the quote submitted under
    /// each before this transaction, or `nil` for none.
    private var prefetched: [String: Quote?] = [:]
    /// What to add to the numbers handed out here, once ``finish()`` has taken their block.
    private(set) var sequenceOffset: Int64 = 0
    /// The answers of statements sent without waiting (``send(_:check:)``), oldest first.
    private var unanswered: [EventLoopFuture<Void>] = []
    /// Whether one of them has a check of its own: a statement the server ran may fail it,
    /// and the transaction must not commit then.
    private var unansweredChecked = false

    /// Quotes written or changed and events appended, not written yet. A quote is found here
    /// by id or idempotency key.
    private struct Pending {
        var quotes: [PendingQuote] = []
        var byID: [Int64: Int] = [:]
        var byKey: [String: Int] = [:]
        var events: [PendingEvent] = []

        /// The ids of the changed quotes that are in the table already.
        var changedIDs: [Int64] { quotes.filter { !$0.isNew }.map(\.quote.id.rawValue) }
    }

    private struct PendingQuote {
        var quote: Quote
        /// New in this transaction (inserted), rather than changed (updated).
        var isNew: Bool
        var key: String?
        /// The history as committed before this transaction.
        var committed: Data
        /// The steps added here, numbered as in this transaction.
        var steps: [StateChange]
        /// The number of the step that put the quote in line, when it waits.
        var waitSeq: Int64?
        /// Its place in line as stored, when it was put at the front (``putFirstInLine(_:)``):
        /// before everyone in line when the transaction looked.
        var waitFront: Int64?
        /// `quote` encoded, when its event's data already is (a new submission's): not encoded
        /// twice.
        var document: [UInt8]?
    }

    private struct PendingEvent {
        var event: StoredEvent
        var mechanic: Int64?
        var from: String?
        var to: String?
        var data: [UInt8]
    }

    /// What a rollback to it restores. Not a copy of ``pending``: a copy shared with the
    /// savepoint would make the next change copy every pending row, once per savepoint, and a
    /// batch of bookings (each in its own) quadratic. New rows and events are cut back to the
    /// counts; rows that were there and changed since are put back from ``undo``.
    private struct Savepoint {
        var lastSeq: Int64
        var takenIDs: Int
        var quotes: Int
        var events: Int
        var undo: Int
        /// Whether `SAVEPOINT` was sent: only before the first statement after it that writes.
        var opened = false
    }

    /// Pending rows as they were before a change, each with its index, oldest first: rows
    /// below the innermost open savepoint's count, which a rollback keeps and must put back.
    /// Emptied when the last savepoint closes.
    private var undo: [(index: Int, entry: PendingQuote)] = []

    init(
        connection: PostgresConnection, now: Date, currency: Currency, quoteIDs: QuoteIDBlocks, instance: String,
        logger: Logger
    ) {
        self.instance = instance
        self.connection = connection
        self.now = now
        self.nowMilliseconds = StoredTime.milliseconds(now)
        self.currency = currency
        self.quoteIDs = quoteIDs
        self.logger = logger
    }

    /// Takes the block of sequence numbers and sends what is pending: the last statement
    /// before `COMMIT`, which ``commit()`` sends behind it. The counters row stays locked
    /// until then, and the commit notifies the other daemons. What does not depend on the
    /// numbers (the quotes' documents, most columns) is built while the counters' answer comes;
    /// the rest is numbered and sent on the connection's event loop as that answer arrives, so
    /// that the row is not held for a hop to this task's thread and back (a batch that changed
    /// quotes still comes back here once, for their check, before `COMMIT`).
    ///
    /// The statement is queued on the connection before anything this task sends next: the
    /// callback that sends it is registered on the counters' answer before this task waits
    /// for that answer, NIO runs a future's callbacks in the order they were registered, and
    /// postgres-nio queues a statement at once when asked on its event loop. A statement that
    /// cannot be built there sends one that fails instead, so that the transaction is rolled
    /// back whatever follows: `COMMIT` then answers `ROLLBACK`.
    func finish() async throws(StoreError) {
        guard !pending.events.isEmpty || !pending.quotes.isEmpty else { return }
        guard lastSeq > 0 else {
            var rows = unnumberedRows()
            Numbering(quotes: pending.quotes, events: pending.events).number(&rows, offset: sequenceOffset)
            return try send(rows)
        }
        let lastSeq = lastSeq
        let counters = try ask(
            """
            WITH bump AS (UPDATE counters SET last_seq = last_seq + \(lastSeq) RETURNING last_seq),
                notified AS (SELECT pg_notify(\(PostgresQuoteStore.appendsChannel), \(instance)) FROM bump)
            SELECT last_seq FROM bump, notified
            """)
        let (rows, numbering) = (unnumberedRows(), Numbering(quotes: pending.quotes, events: pending.events))
        let (connection, logger) = (connection, logger)
        let written = counters.flatMap { answer in
            do throws(StoreError) {
                var rows = rows
                numbering.number(&rows, offset: try Self.offset(answer, lastSeq: lastSeq))
                return connection.query(try rows.query, logger: logger)
            } catch {
                // Its answer is not waited for: the error reported is this one.
                _ = connection.query(Self.abortTransaction, logger: logger)
                return connection.eventLoop.makeFailedFuture(error)
            }
        }
        let changed = rows.updated.quote.count
        if changed > 0 {
            unanswered.append(written.flatMapThrowing { try Self.check(updated: $0.rows.count, of: changed) })
            unansweredChecked = true
        } else {
            unanswered.append(written.map { _ in })
        }
        sequenceOffset = try Self.offset(try await value(of: counters), lastSeq: lastSeq)
    }

    /// A statement that fails, so that the transaction it is sent in can only roll back.
    static let abortTransaction = PostgresQuery(
        unsafeSQL: "DO $$ BEGIN RAISE EXCEPTION 'quoted: the batch''s rows could not be written; rolled back'; END $$")

    /// What to add to this transaction's numbers, from the counters' `answer`: the last
    /// number of the block it took.
    private static func offset(_ answer: PostgresQueryResult, lastSeq: Int64) throws(StoreError) -> Int64 {
        guard let row = answer.rows.first else { throw StoreError(.corrupt, "the counters row is missing") }
        let last: Int64 = try PostgresQuoteStore.decode(row, as: Int64.self)
        let (offset, overflow) = last.subtractingReportingOverflow(lastSeq)
        guard !overflow, offset >= 0 else {
            throw StoreError(.corrupt, "the counters row's last number is out of range")
        }
        return offset
    }

    /// Fails unless every changed quote had its row: `updated` rows of `count`.
    private static func check(updated: Int, of count: Int) throws(StoreError) {
        guard updated == count else {
            throw StoreError(.database, "integrity: \(count - updated) changed quotes had no row to update")
        }
    }

    /// Sends `COMMIT` behind everything sent (after the checks of any that have one), and
    /// waits for every answer; `COMMIT`'s decides.
    /// - It committed, and nothing before it failed: done.
    /// - It committed although a statement before it failed (a `ROLLBACK TO SAVEPOINT` after
    ///   it can recover the transaction): applied, but not as the rules saw it, so the error is
    ///   thrown with `outcomeUnknown`, never acknowledged.
    /// - It answered `ROLLBACK` (a statement before it failed and ended the transaction): not
    ///   applied; the first error is thrown as it is.
    /// - It failed itself: `outcomeUnknown`, unless the server says it rolled back (`busy`: a
    ///   deadlock, a serialization failure), or a statement before it lost the connection, so
    ///   that `COMMIT` was never sent (postgres-nio sends a statement after the last one's
    ///   answer).
    func commit() async throws(StoreError) {
        // A check fails after its statement succeeded, without ending the transaction: it is
        // made before `COMMIT` is sent.
        if unansweredChecked { try await settle() }
        let earlier = EventLoopFuture.whenAllComplete(unanswered, on: connection.eventLoop)
        unanswered = []
        let committed = connection.query("COMMIT", logger: logger).map {
            Result<String, any Error>.success($0.metadata.command)
        }
        .recover { .failure($0) }
        // Neither future fails: each answer is a `Result`.
        let (before, answer) = try await value(of: earlier.and(committed))
        var firstFailure: (any Error)?
        for case .failure(let error) in before {
            firstFailure = error
            break
        }
        switch (answer, firstFailure) {
        case (.success("COMMIT"), nil):
            return
        case (.success("COMMIT"), let failure?):
            throw PostgresQuoteStore.storeError(failure).withUnknownOutcome
        case (.success, let failure):
            throw failure.map(PostgresQuoteStore.storeError)
                ?? StoreError(.database, "PostgreSQL: the transaction was rolled back instead of committed")
        case (.failure, let failure?) where PostgresQuoteStore.isConnectionLoss(failure):
            throw PostgresQuoteStore.storeError(failure)
        case (.failure(let error), _):
            let failure = PostgresQuoteStore.storeError(error)
            throw failure.code == .busy ? failure : failure.withUnknownOutcome
        }
    }

    /// Hands back the quote ids taken, when the transaction did not commit.
    func abandon() {
        quoteIDs.giveBack(takenIDs)
    }

    // MARK: Reading

    func quote(_ id: QuoteID) async throws(StoreError) -> Quote? {
        if let index = pending.byID[id.rawValue] { return pending.quotes[index].quote }
        return try locked(
            id, in: try await query("SELECT data, history FROM quotes WHERE id = \(id.rawValue) FOR UPDATE"))
    }

    func quote(_ id: QuoteID, lockingIf status: QuoteStatus) async throws(StoreError) -> Quote? {
        if let index = pending.byID[id.rawValue] { return pending.quotes[index].quote }
        // A row locked by another transaction is waited for, then judged as it committed.
        let rows = try await query(
            "SELECT data, history FROM quotes WHERE id = \(id.rawValue) AND state = \(status.rawValue) FOR UPDATE"
        )
        if let quote = try locked(id, in: rows) { return quote }
        // In another status, or absent: read as committed, for the refusal to name.
        let committed = try await query("SELECT data FROM quotes WHERE id = \(id.rawValue)")
        guard let row = committed.first else { return nil }
        return try Self.quote(try decode(row, as: Data.self))
    }

    /// The quote `id` in `rows` (its data and history, locked), its history kept for the
    /// update that usually follows; `nil` when `rows` is empty.
    private func locked(_ id: QuoteID, in rows: [PostgresRow]) throws(StoreError) -> Quote? {
        guard let row = rows.first else { return nil }
        let (data, bytes) = try decode(row, as: (Data, Data).self)
        loaded[id.rawValue] = bytes
        return try Self.quote(data)
    }

    func quote(idempotencyKey key: String) async throws(StoreError) -> Quote? {
        if let index = pending.byKey[key] { return pending.quotes[index].quote }
        if let known = prefetched[key] { return known }
        let rows = try await query("SELECT data FROM quotes WHERE idempotency_key = \(key) FOR UPDATE")
        guard let row = rows.first else { return nil }
        return try Self.quote(try decode(row, as: Data.self))
    }

    func prefetch(idempotencyKeys keys: [String]) async throws(StoreError) {
        let rows = try await query("SELECT idempotency_key, data FROM quotes WHERE idempotency_key = ANY(\(keys))")
        for key in keys { prefetched[key] = .some(nil) }
        for row in rows {
            let (key, data) = try decode(row, as: (String, Data).self)
            prefetched[key] = .some(try Self.quote(data))
        }
    }

    func nextQuoteID() async throws(StoreError) -> QuoteID {
        let id: Int64
        if let inHand = quoteIDs.takeInHand() {
            id = inHand
        } else {
            guard let row = try await query("SELECT nextval('quote_ids')").first else {
                throw StoreError(.corrupt, "the quote_ids sequence gave no value")
            }
            id = try quoteIDs.take(fromBlockAt: try decode(row, as: Int64.self))
        }
        takenIDs.append(id)
        return QuoteID(id)
    }

    // MARK: Quotes

    /// Looks for the key first (answered from ``prefetch(idempotencyKeys:)`` or what is
    /// pending, as a rule), then takes an id and adds the quote and its events to what is
    /// pending: nothing is written until ``finish()``.
    func insertSubmission(
        idempotencyKey key: String?, by actor: String?, _ make: (QuoteID) -> (submitted: Quote, priced: Quote)
    ) async throws(StoreError) -> SubmissionInsert {
        if let key, let original = try await quote(idempotencyKey: key) { return .existing(original) }
        let (submitted, priced) = make(try await nextQuoteID())
        let events = try await append(
            [.quote(from: nil, quote: submitted), .quote(from: .submitted, quote: priced)], by: actor)
        insert(
            priced, idempotencyKey: key,
            history: StateChange.submission(
                pricedTo: priced.status, at: now, submittedSeq: events[0].seq, pricedSeq: events[1].seq),
            // The priced event's row holds the priced quote, encoded (`append`).
            document: pending.events.last?.data)
        return .inserted(priced, events: events)
    }

    private func insert(
        _ quote: Quote, idempotencyKey key: String?, history steps: [StateChange], document: [UInt8]?
    ) {
        pending.byID[quote.id.rawValue] = pending.quotes.count
        if let key { pending.byKey[key] = pending.quotes.count }
        pending.quotes.append(
            PendingQuote(
                quote: quote, isNew: true, key: key, committed: Data(), steps: steps,
                waitSeq: quote.status == .waiting ? steps.last?.seq : nil, document: document))
    }

    func update(_ quote: Quote, step: StateChange) async throws(StoreError) {
        let id = quote.id.rawValue
        let index: Int
        if let known = pending.byID[id] {
            index = known
        } else {
            let committed: Data
            if let bytes = loaded[id] {
                committed = bytes
            } else {
                let rows = try await query("SELECT history FROM quotes WHERE id = \(id) FOR UPDATE")
                guard let row = rows.first else { throw StoreError(.database, "integrity: no quote \(id) to update") }
                committed = try decode(row, as: Data.self)
            }
            index = pending.quotes.count
            pending.byID[id] = index
            pending.quotes.append(
                PendingQuote(quote: quote, isNew: false, key: nil, committed: committed, steps: [], waitSeq: nil))
        }
        changeQuote(at: index) { entry in
            entry.quote = quote
            entry.document = nil
            entry.steps.append(step)
            entry.waitSeq = quote.status == .waiting ? step.seq : nil
            entry.waitFront = nil
        }
    }

    /// Changes the pending row at `index`, first keeping it as it was if the innermost open
    /// savepoint may have to put it back.
    private func changeQuote(at index: Int, _ change: (inout PendingQuote) -> Void) {
        if let innermost = savepoints.last, index < innermost.quotes {
            undo.append((index, pending.quotes[index]))
        }
        change(&pending.quotes[index])
    }

    // MARK: Claims

    func claim(_ mechanic: MechanicID, minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Bool {
        try await willWrite()
        let rows = try await query(
            """
            UPDATE mechanics SET quote_id = \(quote.rawValue), free_since = NULL
            WHERE id = \(mechanic.rawValue) AND quote_id IS NULL AND active AND on_duty AND skill >= \(minimumSkill.rawValue)
            RETURNING id
            """)
        return rows.count == 1
    }

    func claimFirstFree(
        minimumSkill: Skill, for quote: QuoteID, excluding: MechanicID?
    ) async throws(StoreError) -> Mechanic? {
        try await willWrite()
        // The pick and the claim in one statement; SKIP LOCKED: a mechanic another daemon's
        // open transaction is claiming is passed over, not waited for.
        let rows = try await query(
            """
            WITH pick AS (
                SELECT id FROM mechanics
                WHERE quote_id IS NULL AND active AND on_duty AND skill >= \(minimumSkill.rawValue)
                    AND id IS DISTINCT FROM \(excluding?.rawValue)
                ORDER BY skill, free_since, id LIMIT 1
                -- Not FOR UPDATE: that would pass over a mechanic whose duty another
                -- transaction checks (FOR KEY SHARE), free as they are.
                FOR NO KEY UPDATE SKIP LOCKED
            )
            UPDATE mechanics m SET quote_id = \(quote.rawValue), free_since = NULL
            FROM pick WHERE m.id = pick.id
            RETURNING m.id, m.name, m.skill
            """)
        guard let row = rows.first else { return nil }
        return Self.mechanic(try decode(row, as: (Int64, String, Int).self))
    }

    func release(_ mechanic: MechanicID, from quote: QuoteID) async throws(StoreError) -> Bool {
        try await willWrite()
        let rows = try await query(
            """
            UPDATE mechanics SET quote_id = NULL, free_since = \(nowMilliseconds)
            WHERE id = \(mechanic.rawValue) AND quote_id = \(quote.rawValue) RETURNING id
            """)
        return rows.count == 1
    }

    func setDuty(_ mechanic: MechanicID, onDuty: Bool) async throws(StoreError) -> Bool {
        try await willWrite()
        // Off duty, after any booking that found them on duty (``isOnDuty(_:)``) has ended.
        if !onDuty { try await lockForRoster([mechanic.rawValue]) }
        let rows = try await query(
            """
            UPDATE mechanics SET on_duty = \(onDuty)
            WHERE id = \(mechanic.rawValue) AND active AND on_duty = \(!onDuty) RETURNING id
            """)
        return rows.count == 1
    }

    // MARK: The wait-list

    func putFirstInLine(_ quote: QuoteID) async throws(StoreError) {
        guard let index = pending.byID[quote.rawValue], pending.quotes[index].waitSeq != nil else { return }
        let rows = try await query("SELECT min(wait_seq) FROM quotes WHERE wait_seq IS NOT NULL")
        var first: Int64 = 0
        if let row = rows.first {
            let least: Int64? = try decode(row, as: Int64?.self)
            first = least ?? 0
        }
        let fronts = pending.quotes.compactMap(\.waitFront)
        let (front, overflow) = min(first, fronts.min() ?? first).subtractingReportingOverflow(1)
        guard !overflow else { throw StoreError(.corrupt, "the wait-list's places are exhausted") }
        changeQuote(at: index) { $0.waitFront = front }
    }

    func oldestWaiting(servableBy mechanic: Mechanic) async throws(StoreError) -> Quote? {
        let servable = { (entry: PendingQuote) in
            entry.waitSeq != nil && entry.quote.request.requiredSkill.rawValue <= mechanic.skill.rawValue
                && (entry.quote.waitingFor.map { $0.id == mechanic.id } ?? true)
        }
        // One put at the front here comes first; then everyone in line before this
        // transaction, before anyone it put there; a quote it changed is judged by its state
        // here, not by its row.
        if let front = pending.quotes.filter({ $0.waitFront != nil && servable($0) }).min(by: {
            ($0.waitFront ?? 0) < ($1.waitFront ?? 0)
        }) {
            return front.quote
        }
        let rows = try await query(
            """
            SELECT id, data, history FROM quotes
            WHERE wait_seq IS NOT NULL AND wait_skill <= \(mechanic.skill.rawValue)
                AND (wait_mechanic IS NULL OR wait_mechanic = \(mechanic.id.rawValue))
                AND NOT (id = ANY(\(pending.changedIDs)))
                -- A mechanic off duty takes no one: the head of the line is not locked for nothing.
                AND EXISTS (SELECT 1 FROM mechanics WHERE id = \(mechanic.id.rawValue) AND active AND on_duty)
            -- Two daemons may put quotes first in line at once, with the same place: id decides.
            ORDER BY wait_seq, id LIMIT 1
            FOR UPDATE SKIP LOCKED
            """)
        if let row = rows.first {
            let (id, data, bytes) = try decode(row, as: (Int64, Data, Data).self)
            loaded[id] = bytes
            return try Self.quote(data)
        }
        return pending.quotes.filter(servable).min { ($0.waitSeq ?? 0) < ($1.waitSeq ?? 0) }?.quote
    }

    /// The lock of a table that holds no rows (`wait_list_lock`), for its modes: `SHARE`, which
    /// transactions that only free mechanics share, conflicts with `SHARE ROW EXCLUSIVE`,
    /// which one that may put quotes in line holds alone. Taken before any row is locked, it
    /// orders the locks of every transaction alike (the catalog's, this one, rows, the
    /// counters), so that it adds no deadlock.
    func lockWaitList(mayPutInLine: Bool) async throws(StoreError) {
        _ = try await query(
            mayPutInLine
                ? "LOCK TABLE wait_list_lock IN SHARE ROW EXCLUSIVE MODE" : "LOCK TABLE wait_list_lock IN SHARE MODE")
    }

    func waitPosition(of quote: QuoteID) async throws(StoreError) -> Int {
        let changed = pending.changedIDs
        if let index = pending.byID[quote.rawValue] {
            guard let seq = pending.quotes[index].waitSeq else { return 0 }
            if let front = pending.quotes[index].waitFront {
                return pending.quotes.count { $0.waitFront.map { $0 <= front } ?? false }
            }
            let rows = try await query(
                "SELECT count(*) FROM quotes WHERE wait_seq IS NOT NULL AND NOT (id = ANY(\(changed)))")
            let before: Int64 = try rows.first.map { row throws(StoreError) in try decode(row, as: Int64.self) } ?? 0
            return Int(before) + pending.quotes.count { $0.waitSeq.map { $0 <= seq } ?? false }
        }
        let rows = try await query(
            """
            SELECT count(*) FROM quotes
            WHERE wait_seq IS NOT NULL AND wait_seq <= (SELECT wait_seq FROM quotes WHERE id = \(quote.rawValue))
                AND NOT (id = ANY(\(changed)))
            """)
        guard let row = rows.first else { return 0 }
        let count: Int64 = try decode(row, as: Int64.self)
        return Int(count)
    }

    func freeMechanics() async throws(StoreError) -> [Mechanic] {
        let rows = try await query(
            "SELECT id, name, skill FROM mechanics WHERE quote_id IS NULL AND active AND on_duty ORDER BY skill, free_since, id"
        )
        return try rows.map { row throws(StoreError) in Self.mechanic(try decode(row, as: (Int64, String, Int).self)) }
    }

    // MARK: Events

    func append(_ changes: [StoredEvent.Kind], by actor: String?) async throws(StoreError) -> [StoredEvent] {
        let at = StoredTime.date(nowMilliseconds)
        var events: [StoredEvent] = []
        events.reserveCapacity(changes.count)
        // A new quote's `quote.submitted` has no row: its priced row stands for it
        // (`StoredEventRow`).
        let submission = StoredEventRow.submission(changes) != nil
        for (index, kind) in changes.enumerated() {
            lastSeq += 1
            let event = StoredEvent(seq: lastSeq, at: at, kind: kind, by: actor)
            events.append(event)
            if submission && index == 0 { continue }
            switch kind {
            case .quote(let previous, let quote):
                pending.events.append(
                    PendingEvent(
                        event: event, mechanic: quote.mechanic?.id.rawValue, from: previous?.rawValue,
                        to: quote.status.rawValue, data: QuoteCodec.encode(quote)))
            default:
                let (mechanic, from, to, data) = kind.columns
                pending.events.append(
                    PendingEvent(
                        event: event, mechanic: mechanic?.rawValue, from: from?.rawValue, to: to?.rawValue, data: data))
            }
        }
        return events
    }

    // MARK: Writing what is pending

    /// The statement that writes what is pending (``BatchStatements``): the new quotes, the
    /// changed ones, the events.
    private typealias Rows = BatchStatements.Rows

    /// What is pending, all but what depends on its numbers in the log (the history of each
    /// quote, its place in line, each event's number): built while the counters' answer comes.
    private func unnumberedRows() -> Rows {
        var rows = Rows()
        for entry in pending.quotes {
            let quote = entry.quote
            let data = entry.document ?? QuoteCodec.encode(quote)
            if entry.isNew {
                append(entry, data: data, to: &rows.inserted.quote)
                rows.inserted.idempotencyKey.append(entry.key)
                rows.inserted.currency.append(currency.code)
                rows.inserted.submittedAt.append(StoredTime.milliseconds(quote.submittedAt))
                rows.inserted.customerEmail.append(StoredCustomer.email(of: quote))
                rows.inserted.customerName.append(StoredCustomer.name(of: quote))
            } else {
                append(entry, data: data, to: &rows.updated.quote)
            }
        }
        for entry in pending.events {
            rows.events.at.append(nowMilliseconds)
            rows.events.type.append(entry.event.type)
            rows.events.quote.append(entry.event.quoteID?.rawValue ?? StoredEvent.Kind.noQuote)
            rows.events.mechanic.append(entry.mechanic)
            rows.events.from.append(entry.from)
            rows.events.to.append(entry.to)
            rows.events.data.append(bytes: entry.data)
            rows.events.actor.append(entry.event.by)
        }
        return rows
    }

    /// Appends what a change can alter of `entry`'s row, but its history and place in line.
    private func append(_ entry: PendingQuote, data: [UInt8], to columns: inout BatchStatements.QuoteColumns) {
        let quote = entry.quote
        let waits = entry.waitSeq != nil
        columns.id.append(quote.id.rawValue)
        columns.state.append(quote.status.rawValue)
        columns.mechanic.append(quote.mechanic?.id.rawValue)
        columns.priceCents.append(quote.price?.cents)
        columns.updatedAt.append(StoredTime.milliseconds(quote.updatedAt))
        columns.data.append(bytes: data)
        columns.waitSkill.append(waits ? Int32(quote.request.requiredSkill.rawValue) : nil)
        columns.waitMechanic.append(waits ? quote.waitingFor?.id.rawValue : nil)
    }

    /// What of the pending rows depends on their numbers in the log, taken to the event loop
    /// that numbers them.
    private struct Numbering: Sendable {
        var quotes: [PendingQuote]
        var events: [PendingEvent]

        /// Adds to `rows` what depends on the numbers in the log: the transaction's numbers
        /// plus `offset`.
        func number(_ rows: inout Rows, offset: Int64) {
            for entry in quotes {
                let history = HistoryCodec.appending(
                    entry.steps.map { change in
                        var change = change
                        change.seq += offset
                        return change
                    }, to: entry.committed)
                let waitSeq = entry.waitSeq.map { entry.waitFront ?? $0 + offset }
                if entry.isNew {
                    rows.inserted.quote.history.append(bytes: history)
                    rows.inserted.quote.waitSeq.append(waitSeq)
                } else {
                    rows.updated.quote.history.append(bytes: history)
                    rows.updated.quote.waitSeq.append(waitSeq)
                }
            }
            for entry in events { rows.events.seq.append(entry.event.seq + offset) }
        }
    }

    /// Sends the statement of `rows`, checked for a row for each changed quote.
    private func send(_ rows: Rows) throws(StoreError) {
        guard !rows.isEmpty else { return }
        let count = rows.updated.quote.count
        guard count > 0 else { return try send(rows.query) }
        try send(rows.query) { changed throws(StoreError) in try Self.check(updated: changed, of: count) }
    }

    // MARK: Savepoints

    func savepoint() async throws(StoreError) {
        savepoints.append(
            Savepoint(
                lastSeq: lastSeq, takenIDs: takenIDs.count, quotes: pending.quotes.count,
                events: pending.events.count, undo: undo.count))
    }

    func rollbackToSavepoint() async throws(StoreError) {
        guard let saved = savepoints.popLast() else { return }
        if saved.opened {
            let name = "s\(savepoints.count + 1)"
            try send(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT \(name)"))
            try send(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT \(name)"))
        }
        quoteIDs.giveBack(Array(takenIDs[saved.takenIDs...]))
        takenIDs.removeSubrange(saved.takenIDs...)
        lastSeq = saved.lastSeq
        // Rows, events and the log only grow between a savepoint and its rollback (an inner
        // rollback cuts back no further than the inner savepoint's counts), and every logged
        // row is below the count of the savepoint it was logged under.
        let rows = pending.quotes.count
        guard saved.quotes <= rows, saved.events <= pending.events.count, saved.undo <= undo.count,
            undo[saved.undo...].allSatisfy({ $0.index < rows })
        else { throw StoreError(.database, "integrity: a savepoint no longer matches the rows it marked") }
        for (index, entry) in undo[saved.undo...].reversed() { pending.quotes[index] = entry }
        undo.removeSubrange(saved.undo...)
        for entry in pending.quotes[saved.quotes...] {
            pending.byID[entry.quote.id.rawValue] = nil
            if let key = entry.key { pending.byKey[key] = nil }
        }
        pending.quotes.removeSubrange(saved.quotes...)
        pending.events.removeSubrange(saved.events...)
        if savepoints.isEmpty { undo = [] }
    }

    func releaseSavepoint() async throws(StoreError) {
        guard let saved = savepoints.popLast() else { return }
        if savepoints.isEmpty { undo = [] }
        if saved.opened {
            try send(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT s\(savepoints.count + 1)"))
        }
    }

    /// Sends the `SAVEPOINT`s not sent yet, before a statement that writes: a command refused
    /// before its first write, or one that only added to what is pending, costs no round trip.
    private func willWrite() async throws(StoreError) {
        for index in savepoints.indices where !savepoints[index].opened {
            try send(PostgresQuery(unsafeSQL: "SAVEPOINT s\(index + 1)"))
            savepoints[index].opened = true
        }
    }

    // MARK: Statements

    /// Runs `query`, built by the caller (binding a value may throw), and collects its rows,
    /// once every statement sent before it has succeeded.
    private func query(_ query: @autoclosure () throws -> PostgresQuery) async throws(StoreError) -> [PostgresRow] {
        try await rows(of: try ask(try query()))
    }

    private func execute(_ query: @autoclosure () throws -> PostgresQuery) async throws(StoreError) {
        _ = try await self.query(try query())
    }

    /// Sends `query` without waiting for its answer, which the next statement waited for
    /// checks (with `check`, given its row count), or ``commit()``: a statement whose answer
    /// nothing needs (`BEGIN`, a savepoint) then costs no turn of its own
    /// back to the caller. postgres-nio runs a connection's statements one after another, in
    /// the order they were sent; after one fails, the transaction's later statements fail too
    /// (until a `ROLLBACK TO SAVEPOINT`), and the first error is the one reported.
    func send(
        _ query: @autoclosure () throws -> PostgresQuery,
        check: (@Sendable (Int) throws(StoreError) -> Void)? = nil
    ) throws(StoreError) {
        let answer = connection.query(try built(query), logger: logger)
        if let check {
            unanswered.append(answer.flatMapThrowing { try check($0.rows.count) })
            unansweredChecked = true
        } else {
            unanswered.append(answer.map { _ in })
        }
    }

    /// Sends `query`; its answer, once every statement sent before it has succeeded.
    private func ask(_ query: @autoclosure () throws -> PostgresQuery) throws(StoreError)
        -> EventLoopFuture<PostgresQueryResult>
    {
        waitForAll(then: connection.query(try built(query), logger: logger))
    }

    /// `last`, failed by the first of the statements sent before it that failed.
    private func waitForAll<T: Sendable>(then last: EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard !unanswered.isEmpty else { return last }
        let earlier = EventLoopFuture.andAllSucceed(unanswered, on: connection.eventLoop)
        unanswered = []
        unansweredChecked = false
        return earlier.flatMap { last }
    }

    /// Waits for the statements sent without waiting, before statements this type does not
    /// send itself (the catalog's): an earlier failure is then reported as itself, not as the
    /// failed transaction it left.
    private func settle() async throws(StoreError) {
        guard !unanswered.isEmpty else { return }
        try await value(of: waitForAll(then: connection.eventLoop.makeSucceededVoidFuture()))
    }

    private func rows(of answer: EventLoopFuture<PostgresQueryResult>) async throws(StoreError) -> [PostgresRow] {
        try await value(of: answer).rows
    }

    /// What `future` comes to, its failure as a `StoreError`.
    private func value<T: Sendable>(of future: EventLoopFuture<T>) async throws(StoreError) -> T {
        do {
            return try await future.get()
        } catch {
            throw PostgresQuoteStore.storeError(error)
        }
    }

    private func built(_ query: () throws -> PostgresQuery) throws(StoreError) -> PostgresQuery {
        do {
            return try query()
        } catch {
            throw PostgresQuoteStore.storeError(error)
        }
    }

    private func decode<each T: PostgresDecodable>(_ row: PostgresRow, as: (repeat each T).Type) throws(StoreError)
        -> (repeat each T)
    {
        try PostgresQuoteStore.decode(row, as: (repeat each T).self)
    }

    static func quote(_ data: Data) throws(StoreError) -> Quote {
        do {
            return try QuoteCodec.decodeQuote(data)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
    }

    static func mechanic(_ row: (Int64, String, Int)) -> Mechanic {
        Mechanic(id: MechanicID(row.0), name: row.1, skill: Skill(rawValue: row.2) ?? .junior)
    }
}

// MARK: The catalog

extension PostgresTransaction {
    func catalogVersion(forChange: Bool) async throws(StoreError) -> Int64 {
        let rows = try await query(
            PostgresQuery(unsafeSQL: "SELECT version FROM catalog_version" + (forChange ? " FOR UPDATE" : "")))
        guard let row = rows.first else { return 0 }
        return try decode(row, as: Int64.self)
    }

    func catalog() async throws(StoreError) -> Catalog {
        try await settle()
        guard let catalog = try await PostgresQuoteStore.loadCatalog(on: connection, lock: false) else {
            throw StoreError(.corrupt, "the database holds no catalog")
        }
        // Quotes this transaction submits are priced in it.
        currency = catalog.currency
        recordedCatalog = (catalog.version, catalog.currency)
        return catalog
    }

    func nextMechanicID() async throws(StoreError) -> MechanicID? {
        let rows = try await query("SELECT coalesce(max(id), 0) FROM mechanics")
        var last: Int64 = 0
        if let row = rows.first { last = try decode(row, as: Int64.self) }
        let (next, overflow) = last.addingReportingOverflow(1)
        return overflow ? nil : MechanicID(next)
    }

    func addMechanic(_ mechanic: Mechanic) async throws(StoreError) {
        try await willWrite()
        try await execute(
            """
            INSERT INTO mechanics (id, name, skill, active, quote_id, free_since, on_duty)
            VALUES (\(mechanic.id.rawValue), \(mechanic.name), \(mechanic.skill.rawValue), TRUE, NULL, 0, TRUE)
            """)
    }

    func updateMechanic(_ mechanic: MechanicID, skill: Skill) async throws(StoreError) {
        try await willWrite()
        try await execute("UPDATE mechanics SET skill = \(skill.rawValue) WHERE id = \(mechanic.rawValue) AND active")
    }

    func retireMechanic(_ mechanic: MechanicID) async throws(StoreError) {
        try await willWrite()
        try await lockForRoster([mechanic.rawValue])
        try await execute("UPDATE mechanics SET active = FALSE WHERE id = \(mechanic.rawValue)")
    }

    func replaceCatalog(_ catalog: Catalog) async throws(StoreError) {
        try await willWrite()
        let ids = catalog.mechanics.map(\.id.rawValue)
        try await execute("SELECT id FROM mechanics WHERE active AND NOT (id = ANY(\(ids))) FOR UPDATE")
        try await PostgresQuoteStore.sync(catalog, on: connection, logger: logger)
        currency = catalog.currency
    }

    /// Locks `mechanics`' rows before their duty or membership changes: a booking that found
    /// one on duty holds a key-share lock on its row (``isOnDuty(_:)``) until it commits, so
    /// the change waits for it, and then finds any quote it put in line for them. (An
    /// `UPDATE` of those columns alone would not wait: it does not conflict with a key share.)
    private func lockForRoster(_ mechanics: [Int64]) async throws(StoreError) {
        try await execute("SELECT id FROM mechanics WHERE id = ANY(\(mechanics)) FOR UPDATE")
    }

    func recordCatalog(_ catalog: Catalog) async throws(StoreError) {
        try await willWrite()
        try await settle()
        try await PostgresQuoteStore.record(catalog, on: connection)
        recordedCatalog = (catalog.version, catalog.currency)
    }

    func quotesWaiting(for mechanic: MechanicID) async throws(StoreError) -> [QuoteID] {
        var ids: [QuoteID] = []
        for row in try await query(
            """
            SELECT id FROM quotes WHERE wait_seq IS NOT NULL AND wait_mechanic = \(mechanic.rawValue)
            ORDER BY wait_seq, id
            """)
        {
            ids.append(QuoteID(try decode(row, as: Int64.self)))
        }
        // Those put in line in this transaction are not written yet.
        let stored = Set(ids)
        for entry in pending.quotes where entry.isNew || !stored.contains(entry.quote.id) {
            if case .waiting(_, _, let named?) = entry.quote.stage, named.id == mechanic { ids.append(entry.quote.id) }
        }
        return ids
    }

    func isOnDuty(_ mechanic: MechanicID) async throws(StoreError) -> Bool? {
        // Held until the commit: a retirement or a change of duty racing this transaction
        // waits for it (``lockForRoster(_:)``, and then finds what it decided), or is seen by it.
        // A key share, so that claims and releases of the row (plain updates) never wait.
        let rows = try await query(
            "SELECT on_duty FROM mechanics WHERE id = \(mechanic.rawValue) AND active FOR KEY SHARE")
        guard let row = rows.first else { return nil }
        return try decode(row, as: Bool.self)
    }

    func hasOpenQuotes() async throws(StoreError) -> Bool {
        let rows = try await query(
            "SELECT EXISTS (SELECT 1 FROM quotes WHERE state NOT IN ('completed', 'cancelled'))")
        guard let row = rows.first else { return false }
        return try decode(row, as: Bool.self)
    }
}
