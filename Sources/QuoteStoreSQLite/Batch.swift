import Foundation
import GRDB
import QuoteCore
import QuoteStore

/// The work of one write transaction: executes commands against the open database and
/// appends their events; each quote row carries its own history (``HistoryCodec``).
///
/// A domain refusal (`QuoteError`) is that command's result and changes nothing; anything
/// else is a database failure that aborts the whole batch.
final class Batch {
    let db: Database
    let catalog: Catalog
    let now: Date
    let nowMilliseconds: Int64
    /// The last quote id handed out in this transaction; read from the table once per batch.
    private var lastQuoteID: Int64?
    /// The last event sequence number handed out in this transaction; read once per batch.
    /// Rolled back with a savepoint, so that the log stays gap-free.
    private var lastSeq: Int64?
    /// The batch's statements, looked up in GRDB's cache once per batch rather than once per
    /// command: each lookup hashes the whole SQL text, ~3,500 instructions a submission
    /// (callgrind, `quoted-bench engine`).
    private var statements = [Statement?](repeating: nil, count: Query.allCases.count)

    /// The statements a batch runs, one slot each in ``statements``.
    private enum Query: Int, CaseIterable {
        case quoteByKey, claim, pickBest, claimPicked, release, load, maxID, insertQuote, updateQuote, event
        case readySubmissionEvents, pendingSubmissionEvents
    }

    init(db: Database, catalog: Catalog, now: Date) {
        self.db = db
        self.catalog = catalog
        self.now = now
        self.nowMilliseconds = SQLiteQuoteStore.milliseconds(now)
    }

    /// Runs `command`; a domain refusal is its result, and leaves no trace.
    ///
    /// Every command decides before it writes (validation, pricing, the transition, a claim
    /// whose `UPDATE` matched no row), so a refusal comes before any row changes, and SQLite's
    /// change counter proves it each time. Should a refusal ever follow a write, the whole
    /// batch is aborted instead (``RefusedAfterWriting``): nothing half-done is committed.
    /// This replaced a savepoint around every command, which cost ~8% of a submission's
    /// instructions (callgrind, `quoted-bench store`).
    func apply(_ command: StoreCommand) throws -> Result<CommandOutcome, QuoteError> {
        let changesBefore = db.totalChangesCount
        do {
            return .success(try execute(command))
        } catch let refusal as QuoteError {
            guard db.totalChangesCount == changesBefore else { throw RefusedAfterWriting(refusal: refusal) }
            return .failure(refusal)
        }
    }

    /// A command refused after it had changed rows: a bug, answered by rolling back the batch.
    struct RefusedAfterWriting: Error, CustomStringConvertible {
        let refusal: QuoteError
        var description: String { "a command was refused after writing (\(refusal)); the batch is rolled back" }
    }

    /// `body` inside a savepoint named `name`: released on success, rolled back on a
    /// `QuoteError`, left to the enclosing transaction on any other error. For a step that
    /// may be refused after writing, such as booking a just-written submission.
    ///
    /// Prepared once per connection (GRDB's `inSavepoint` parses its SQL on every call).
    private func inSavepoint<T>(
        _ name: StaticString, _ body: () throws -> T
    ) throws -> Result<T, QuoteError> {
        try db.cachedStatement(sql: "SAVEPOINT \(name)").execute()
        let result: Result<T, QuoteError>
        let seqBefore = lastSeq
        do {
            result = .success(try body())
        } catch let error as QuoteError {
            try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT \(name)").execute()
            lastSeq = seqBefore
            result = .failure(error)
        }
        try db.cachedStatement(sql: "RELEASE SAVEPOINT \(name)").execute()
        return result
    }

    /// The prepared statement for `query`, whose text is `sql`.
    private func prepared(_ query: Query, _ sql: @autoclosure () -> String) throws -> Statement {
        if let statement = statements[query.rawValue] { return statement }
        let statement = try db.cachedStatement(sql: sql())
        statements[query.rawValue] = statement
        return statement
    }

    private func execute(_ command: StoreCommand) throws -> CommandOutcome {
        switch command {
        case .submit(let submission, let key, let book):
            return try submit(submission, key: key, book: book)
        case .resolve(let id, let resolution):
            let stored = try load(id)
            let resolved = try stored.quote.resolved(with: resolution, in: catalog, at: now)
            return CommandOutcome(quote: resolved, events: [try record(resolved, replacing: stored)])
        case .book(let id, let mechanic):
            return try book(try load(id), mechanicName: mechanic)
        case .complete(let id):
            let stored = try load(id)
            let completed = try stored.quote.completed(at: now)
            var events = [try record(completed, replacing: stored)]
            if let mechanic = stored.quote.mechanic { events.append(try release(mechanic, from: stored.quote.id)) }
            return CommandOutcome(quote: completed, events: events)
        case .cancel(let id, let reason):
            let stored = try load(id)
            let cancelled = try stored.quote.cancelled(reason: reason, at: now)
            var events = [try record(cancelled, replacing: stored)]
            if let mechanic = stored.quote.mechanic { events.append(try release(mechanic, from: stored.quote.id)) }
            return CommandOutcome(quote: cancelled, events: events)
        }
    }

    // MARK: Commands

    private func submit(_ submission: Submission, key: String?, book: Bool) throws -> CommandOutcome {
        if let key {
            let statement = try prepared(.quoteByKey, "SELECT data FROM quotes WHERE idempotency_key = ?")
            if let data = try statement.fetchFirst(binding: { $0.bind(key) }, { $0.data(0) }) {
                return CommandOutcome(quote: try QuoteCodec.decodeQuote(data), events: [], replayed: true)
            }
        }
        let request = try QuoteBuilder(submission).build(in: catalog, at: now)
        let id = try nextQuoteID()
        let submitted = Quote(id: id, request: request, submittedAt: now)
        let priced = try submitted.priced(currency: catalog.currency, at: now)
        // One row write for both states: the row holds the priced quote, the log and the
        // row's history both steps.
        let pricedData = QuoteCodec.encode(priced)
        let events = try appendSubmissionEvents(submitted, priced: priced, data: pricedData)
        let history = HistoryCodec.appending(
            [
                HistoryStep(from: nil, to: .submitted, seq: events[0].seq, at: nowMilliseconds),
                HistoryStep(from: .submitted, to: priced.status, seq: events[1].seq, at: nowMilliseconds),
            ], to: Data())
        try insert(priced, data: pricedData, history: history, key: key)
        guard book && priced.status == .ready else { return CommandOutcome(quote: priced, events: events) }

        // Book in a nested savepoint: if no mechanic can be had, the quote stays ready.
        let stored = Stored(quote: priced, history: history)
        switch try inSavepoint("booking", { try self.book(stored, mechanicName: nil) }) {
        case .success(let outcome):
            return CommandOutcome(quote: outcome.quote, events: events + outcome.events)
        case .failure(let bookingError):
            return CommandOutcome(quote: priced, events: events, bookingError: bookingError)
        }
    }

    /// Claims a mechanic for a ready quote and books it, all or nothing.
    private func book(_ stored: Stored, mechanicName: String?) throws -> CommandOutcome {
        let quote = stored.quote
        guard quote.status == .ready else { throw QuoteError.illegalTransition(from: quote.status, to: .booked) }
        let required = quote.request.requiredSkill
        let mechanic: Mechanic
        if let name = mechanicName {
            guard let named = catalog.mechanic(named: name) else {
                throw QuoteError(.unknownMechanic, "no mechanic named \"\(name)\"")
            }
            // Refuse an unable mechanic before touching their busy flag.
            _ = try quote.booked(with: named, at: now)
            guard try claim(named.id, for: quote.id, minimumSkill: required) else {
                throw QuoteError(.mechanicBusy, "\(named.name) is booked on another quote")
            }
            mechanic = named
        } else if let preferred = quote.request.preferredMechanic,
            try claim(preferred.id, for: quote.id, minimumSkill: required)
        {
            mechanic = preferred
        } else {
            guard let picked = try claimBest(for: quote.id, minimumSkill: required) else {
                throw QuoteError(.noMechanicAvailable, "no free mechanic has the \(required) skill this quote needs")
            }
            mechanic = picked
        }
        let booked = try quote.booked(with: mechanic, at: now)
        let quoteEvent = try record(booked, replacing: stored)
        let busyEvent = try appendEvent(
            type: "mechanic.busy", quote: quote.id, mechanic: mechanic.id, from: nil, to: nil,
            data: QuoteCodec.encode(mechanic), kind: .mechanicBusy(mechanic, quote: quote.id))
        return CommandOutcome(quote: booked, events: [quoteEvent, busyEvent])
    }

    // MARK: Claims

    /// Claims `mechanic` for `quote` if they are free, active and skilled enough: one
    /// conditional UPDATE, its affected rows checked.
    private func claim(_ mechanic: MechanicID, for quote: QuoteID, minimumSkill: Skill) throws -> Bool {
        let statement = try prepared(
            .claim,
            """
            UPDATE mechanics SET quote_id = ?, free_since = NULL
            WHERE id = ? AND quote_id IS NULL AND active = 1 AND skill >= ?
            """)
        try statement.execute {
            $0.bind(quote.rawValue)
            $0.bind(mechanic.rawValue)
            $0.bind(Int64(minimumSkill.rawValue))
        }
        return db.changesCount == 1
    }

    /// Claims the dispatch policy's choice: the least skilled sufficient free mechanic, free
    /// the longest, lowest id (`QuoteCore.DispatchPolicy`), found through the
    /// `mechanics_free` index, then claimed by its id.
    ///
    /// Two statements, both under the batch's write lock, so no other writer comes between
    /// them (with PostgreSQL, the pick will be `FOR UPDATE SKIP LOCKED`). One `UPDATE ...
    /// WHERE id = (SELECT ...) RETURNING` did the same in 25,400 instructions; these take
    /// 3,500 (callgrind, `quoted-bench store`).
    private func claimBest(for quote: QuoteID, minimumSkill: Skill) throws -> Mechanic? {
        let pick = try prepared(
            .pickBest,
            """
            SELECT id, name, skill FROM mechanics
            WHERE quote_id IS NULL AND active = 1 AND skill >= ?
            ORDER BY skill, free_since, id LIMIT 1
            """)
        guard
            let mechanic = try pick.fetchFirst(
                binding: { $0.bind(Int64(minimumSkill.rawValue)) },
                { row in
                    Mechanic(
                        id: MechanicID(row.int64(0)), name: row.string(1),
                        skill: Skill(rawValue: Int(row.int64(2))) ?? .junior)
                })
        else { return nil }
        let claim = try prepared(
            .claimPicked, "UPDATE mechanics SET quote_id = ?, free_since = NULL WHERE id = ? AND quote_id IS NULL")
        try claim.execute {
            $0.bind(quote.rawValue)
            $0.bind(mechanic.id.rawValue)
        }
        guard db.changesCount == 1 else {
            throw DatabaseError(
                resultCode: .SQLITE_CONSTRAINT, message: "integrity: free mechanic \(mechanic.id) could not be claimed")
        }
        return mechanic
    }

    /// Frees `mechanic` from `quote`, appending `mechanic.free`.
    private func release(_ mechanic: Mechanic, from quote: QuoteID) throws -> StoredEvent {
        let statement = try prepared(
            .release,
            "UPDATE mechanics SET quote_id = NULL, free_since = ? WHERE id = ? AND quote_id = ?")
        try statement.execute {
            $0.bind(nowMilliseconds)
            $0.bind(mechanic.id.rawValue)
            $0.bind(quote.rawValue)
        }
        guard db.changesCount == 1 else {
            throw DatabaseError(
                resultCode: .SQLITE_CONSTRAINT,
                message: "integrity: mechanic \(mechanic.id) was not held by quote \(quote)")
        }
        return try appendEvent(
            type: "mechanic.free", quote: quote, mechanic: mechanic.id, from: nil, to: nil,
            data: QuoteCodec.encode(mechanic), kind: .mechanicFree(mechanic, quote: quote))
    }

    // MARK: Repair

    func repair(_ violation: IntegrityViolation) throws {
        guard let mechanicID = violation.mechanic, let quoteID = violation.quote else { return }
        let held = try Int64.fetchOne(
            db, sql: "SELECT quote_id FROM mechanics WHERE id = ?", arguments: [mechanicID.rawValue])
        let state = try String.fetchOne(db, sql: "SELECT state FROM quotes WHERE id = ?", arguments: [quoteID.rawValue])
        let mechanic =
            catalog.mechanic(id: mechanicID) ?? Mechanic(id: mechanicID, name: "#\(mechanicID)", skill: .junior)
        if held == quoteID.rawValue && state != QuoteStatus.booked.rawValue {
            _ = try release(mechanic, from: quoteID)
        } else if state == QuoteStatus.booked.rawValue && held == nil {
            try db.execute(
                sql: "UPDATE mechanics SET quote_id = ?, free_since = NULL WHERE id = ? AND quote_id IS NULL",
                arguments: [quoteID.rawValue, mechanicID.rawValue])
            _ = try appendEvent(
                type: "mechanic.busy", quote: quoteID, mechanic: mechanicID, from: nil, to: nil,
                data: QuoteCodec.encode(mechanic), kind: .mechanicBusy(mechanic, quote: quoteID))
        }
    }

    // MARK: Rows

    /// A quote as read for a transition, with its history's stored bytes (appended to, never
    /// decoded, by the transition).
    private struct Stored {
        var quote: Quote
        var history: Data
    }

    private func load(_ id: QuoteID) throws -> Stored {
        let statement = try prepared(.load, "SELECT data, history FROM quotes WHERE id = ?")
        guard
            let (data, history) = try statement.fetchFirst(
                binding: { $0.bind(id.rawValue) }, { ($0.data(0), $0.data(1)) })
        else {
            throw QuoteError(.unknownQuote, "no quote \(id)")
        }
        return Stored(quote: try QuoteCodec.decodeQuote(data), history: history)
    }

    /// The next quote id: one more than the highest, read once per batch under the write lock
    /// (a failed submission's id is rolled back with its savepoint, so it is not reused early:
    /// the counter only moves on). Ids are never reused: quotes are never deleted.
    private func nextQuoteID() throws -> QuoteID {
        let last: Int64
        if let known = lastQuoteID {
            last = known
        } else {
            let statement = try prepared(
                .maxID,
                "SELECT coalesce(max(id), 0) FROM quotes")
            last = try Int64.fetchOne(statement) ?? 0
        }
        lastQuoteID = last + 1
        return QuoteID(last + 1)
    }

    /// The next `count` event sequence numbers' first: one more than the highest ever handed
    /// out, read once per batch under the write lock.
    private func nextSeq(count: Int64 = 1) throws -> Int64 {
        let last = try lastSeq ?? SQLiteQuoteStore.lastSequence(db)
        lastSeq = last + count
        return last + 1
    }

    private func insert(_ quote: Quote, data: Data, history: Data, key: String?) throws {
        let statement = try prepared(
            .insertQuote,
            """
            INSERT INTO quotes (id, state, idempotency_key, mechanic_id, price_cents, currency, submitted_at,
                updated_at, data, history)
            VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)
            """)
        try statement.execute {
            $0.bind(quote.id.rawValue)
            $0.bind(quote.status.rawValue)
            $0.bind(key)
            $0.bind(quote.price?.cents)
            $0.bind(catalog.currency.code)
            $0.bind(nowMilliseconds)
            $0.bind(nowMilliseconds)
            $0.bind(data)
            $0.bind(history)
        }
    }

    /// Appends the event announcing `quote`'s new state, then writes that state and the step
    /// into its row (the event first: the step names the event's sequence number).
    private func record(_ quote: Quote, replacing stored: Stored) throws -> StoredEvent {
        let from = stored.quote.status
        let data = QuoteCodec.encode(quote)
        let event = try appendEvent(
            type: "quote.\(quote.status.rawValue)", quote: quote.id, mechanic: quote.mechanic?.id, from: from,
            to: quote.status, data: data, kind: .quote(from: from, quote: quote))
        let history = HistoryCodec.appending(
            [HistoryStep(from: from, to: quote.status, seq: event.seq, at: nowMilliseconds)], to: stored.history)
        let statement = try prepared(
            .updateQuote,
            """
            UPDATE quotes SET state = ?, mechanic_id = ?, price_cents = ?, updated_at = ?, data = ?, history = ?
            WHERE id = ?
            """)
        try statement.execute {
            $0.bind(quote.status.rawValue)
            $0.bind(quote.mechanic?.id.rawValue)
            $0.bind(quote.price?.cents)
            $0.bind(nowMilliseconds)
            $0.bind(data)
            $0.bind(history)
            $0.bind(quote.id.rawValue)
        }
        return event
    }

    /// Appends a new quote's two steps, `submitted` then its priced state, as two events with
    /// consecutive sequence numbers, in one statement.
    ///
    /// `quote.submitted` is stored without data: its quote is the priced one back at its
    /// first state, and reading the log rebuilds it from the next event
    /// (`SQLiteQuoteStore.event(_:next:)`). Encoding and storing the quote a second time
    /// cost ~6% of a submission's instructions and 800 bytes of every log page.
    private func appendSubmissionEvents(_ submitted: Quote, priced: Quote, data pricedData: Data) throws
        -> [StoredEvent]
    {
        // The states are closed enums, written into the SQL rather than bound: each text bind
        // copies into a fresh SQLite allocation, ~700 instructions (callgrind).
        let status = priced.status
        precondition(status == .ready || status == .pending, "a submission is priced to ready or pending")
        let events = try prepared(
            status == .ready ? .readySubmissionEvents : .pendingSubmissionEvents,
            """
            INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data)
            VALUES (?, ?, 'quote.submitted', ?, NULL, NULL, 'submitted', X''),
                (?, ?, 'quote.\(status.rawValue)', ?, NULL, 'submitted', '\(status.rawValue)', ?)
            """)
        let id = submitted.id.rawValue
        let submittedSeq = try nextSeq(count: 2)
        let pricedSeq = submittedSeq + 1
        try events.execute {
            $0.bind(submittedSeq)
            $0.bind(nowMilliseconds)
            $0.bind(id)
            $0.bind(pricedSeq)
            $0.bind(nowMilliseconds)
            $0.bind(id)
            $0.bind(pricedData)
        }
        let at = SQLiteQuoteStore.date(nowMilliseconds)
        return [
            StoredEvent(seq: pricedSeq - 1, at: at, kind: .quote(from: nil, quote: submitted)),
            StoredEvent(seq: pricedSeq, at: at, kind: .quote(from: .submitted, quote: priced)),
        ]
    }

    private func appendEvent(
        type: String, quote: QuoteID, mechanic: MechanicID?, from: QuoteStatus?, to: QuoteStatus?, data: Data,
        kind: StoredEvent.Kind
    ) throws -> StoredEvent {
        let statement = try prepared(
            .event,
            """
            INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let seq = try nextSeq()
        try statement.execute {
            $0.bind(seq)
            $0.bind(nowMilliseconds)
            $0.bind(type)
            $0.bind(quote.rawValue)
            $0.bind(mechanic?.rawValue)
            $0.bind(from?.rawValue)
            $0.bind(to?.rawValue)
            $0.bind(data)
        }
        return StoredEvent(seq: seq, at: SQLiteQuoteStore.date(nowMilliseconds), kind: kind)
    }
}
