import Foundation
import GRDB
import QuoteCore
import QuoteStore

/// The work of one write transaction: executes commands against the open database, each
/// inside the caller's savepoint, and appends their events.
///
/// Domain refusals are thrown as `QuoteError` (the caller rolls back the savepoint);
/// anything else is a database failure that aborts the whole batch.
struct Batch {
    let db: Database
    let catalog: Catalog
    let now: Date
    let nowMilliseconds: Int64

    init(db: Database, catalog: Catalog, now: Date) {
        self.db = db
        self.catalog = catalog
        self.now = now
        self.nowMilliseconds = SQLiteQuoteStore.milliseconds(now)
    }

    func execute(_ command: StoreCommand) throws -> CommandOutcome {
        switch command {
        case .submit(let submission, let key, let book):
            return try submit(submission, key: key, book: book)
        case .resolve(let id, let resolution):
            let quote = try load(id)
            let resolved = try quote.resolved(with: resolution, in: catalog, at: now)
            return CommandOutcome(quote: resolved, events: [try record(resolved, from: quote.status)])
        case .book(let id, let mechanic):
            let quote = try load(id)
            return try book(quote, mechanicName: mechanic)
        case .complete(let id):
            let quote = try load(id)
            let completed = try quote.completed(at: now)
            var events = [try record(completed, from: quote.status)]
            if let mechanic = quote.mechanic { events.append(try release(mechanic, from: quote.id)) }
            return CommandOutcome(quote: completed, events: events)
        case .cancel(let id, let reason):
            let quote = try load(id)
            let cancelled = try quote.cancelled(reason: reason, at: now)
            var events = [try record(cancelled, from: quote.status)]
            if let mechanic = quote.mechanic { events.append(try release(mechanic, from: quote.id)) }
            return CommandOutcome(quote: cancelled, events: events)
        }
    }

    // MARK: Commands

    private func submit(_ submission: Submission, key: String?, book: Bool) throws -> CommandOutcome {
        if let key {
            let statement = try db.cachedStatement(sql: "SELECT data FROM quotes WHERE idempotency_key = ?")
            if let data = try Data.fetchOne(statement, arguments: [key]) {
                return CommandOutcome(quote: try QuoteCodec.decodeQuote(data), events: [], replayed: true)
            }
        }
        let request = try QuoteBuilder(submission).build(in: catalog, at: now)
        let id = try nextQuoteID()
        let submitted = Quote(id: id, request: request, submittedAt: now)
        let priced = try submitted.priced(currency: catalog.currency, at: now)
        // One row write for both states: the row holds the priced quote, the log both steps.
        let pricedData = QuoteCodec.encode(priced)
        try insert(priced, data: pricedData, key: key)
        let events = [
            try appendQuoteEvent(submitted, from: nil, data: QuoteCodec.encode(submitted)),
            try appendQuoteEvent(priced, from: .submitted, data: pricedData),
        ]
        guard book && priced.status == .ready else { return CommandOutcome(quote: priced, events: events) }

        // Book in a nested savepoint: if no mechanic can be had, the quote stays ready.
        var outcome: CommandOutcome?
        var bookingError: QuoteError?
        let batch = self
        try db.inSavepoint {
            do {
                outcome = try batch.book(priced, mechanicName: nil)
                return .commit
            } catch let error as QuoteError {
                bookingError = error
                return .rollback
            }
        }
        if let outcome { return CommandOutcome(quote: outcome.quote, events: events + outcome.events) }
        return CommandOutcome(quote: priced, events: events, bookingError: bookingError)
    }

    /// Claims a mechanic for a ready quote and books it, all or nothing.
    private func book(_ quote: Quote, mechanicName: String?) throws -> CommandOutcome {
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
        let quoteEvent = try record(booked, from: quote.status)
        let busyEvent = try appendEvent(
            type: "mechanic.busy", quote: quote.id, mechanic: mechanic.id, from: nil, to: nil,
            data: QuoteCodec.encode(mechanic), kind: .mechanicBusy(mechanic, quote: quote.id))
        return CommandOutcome(quote: booked, events: [quoteEvent, busyEvent])
    }

    // MARK: Claims

    /// Claims `mechanic` for `quote` if they are free, active and skilled enough: one
    /// conditional UPDATE, its affected rows checked.
    private func claim(_ mechanic: MechanicID, for quote: QuoteID, minimumSkill: Skill) throws -> Bool {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE mechanics SET quote_id = ?, free_since = NULL
                WHERE id = ? AND quote_id IS NULL AND active = 1 AND skill >= ?
                """)
        try statement.execute(arguments: [quote.rawValue, mechanic.rawValue, minimumSkill.rawValue])
        return db.changesCount == 1
    }

    /// Claims the dispatch policy's choice: the least skilled sufficient free mechanic, free
    /// the longest, lowest id (`QuoteCore.DispatchPolicy`), found through the
    /// `mechanics_free` index and claimed in the same statement.
    private func claimBest(for quote: QuoteID, minimumSkill: Skill) throws -> Mechanic? {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE mechanics SET quote_id = ?, free_since = NULL
                WHERE id = (
                    SELECT id FROM mechanics
                    WHERE quote_id IS NULL AND active = 1 AND skill >= ?
                    ORDER BY skill, free_since, id LIMIT 1)
                AND quote_id IS NULL
                RETURNING id, name, skill
                """)
        guard let row = try Row.fetchOne(statement, arguments: [quote.rawValue, minimumSkill.rawValue]) else {
            return nil
        }
        return Mechanic(id: MechanicID(row[0]), name: row[1], skill: Skill(rawValue: row[2]) ?? .junior)
    }

    /// Frees `mechanic` from `quote`, appending `mechanic.free`.
    private func release(_ mechanic: Mechanic, from quote: QuoteID) throws -> StoredEvent {
        let statement = try db.cachedStatement(
            sql: "UPDATE mechanics SET quote_id = NULL, free_since = ? WHERE id = ? AND quote_id = ?")
        try statement.execute(arguments: [nowMilliseconds, mechanic.id.rawValue, quote.rawValue])
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

    private func load(_ id: QuoteID) throws -> Quote {
        let statement = try db.cachedStatement(sql: "SELECT data FROM quotes WHERE id = ?")
        guard let data = try Data.fetchOne(statement, arguments: [id.rawValue]) else {
            throw QuoteError(.unknownQuote, "no quote \(id)")
        }
        return try QuoteCodec.decodeQuote(data)
    }

    private func nextQuoteID() throws -> QuoteID {
        let statement = try db.cachedStatement(sql: "SELECT coalesce(max(id), 0) + 1 FROM quotes")
        return QuoteID(try Int64.fetchOne(statement) ?? 1)
    }

    private func insert(_ quote: Quote, data: Data, key: String?) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO quotes (id, state, idempotency_key, mechanic_id, price_cents, currency, submitted_at,
                    updated_at, data)
                VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)
                """)
        try statement.execute(arguments: [
            quote.id.rawValue, quote.status.rawValue, key, quote.price?.cents, catalog.currency.code, nowMilliseconds,
            nowMilliseconds, data,
        ])
    }

    /// Writes the quote's new state and appends its event and history step.
    private func record(_ quote: Quote, from: QuoteStatus) throws -> StoredEvent {
        let data = QuoteCodec.encode(quote)
        let statement = try db.cachedStatement(
            sql: "UPDATE quotes SET state = ?, mechanic_id = ?, price_cents = ?, updated_at = ?, data = ? WHERE id = ?")
        try statement.execute(arguments: [
            quote.status.rawValue, quote.mechanic?.id.rawValue, quote.price?.cents, nowMilliseconds, data,
            quote.id.rawValue,
        ])
        return try appendQuoteEvent(quote, from: from, data: data)
    }

    private func appendQuoteEvent(_ quote: Quote, from: QuoteStatus?, data: Data) throws -> StoredEvent {
        let event = try appendEvent(
            type: "quote.\(quote.status.rawValue)", quote: quote.id, mechanic: quote.mechanic?.id, from: from,
            to: quote.status, data: data, kind: .quote(from: from, quote: quote))
        let statement = try db.cachedStatement(
            sql: "INSERT INTO quote_history (quote_id, seq, from_state, to_state, at) VALUES (?, ?, ?, ?, ?)")
        try statement.execute(arguments: [
            quote.id.rawValue, event.seq, from?.rawValue, quote.status.rawValue, nowMilliseconds,
        ])
        return event
    }

    private func appendEvent(
        type: String, quote: QuoteID, mechanic: MechanicID?, from: QuoteStatus?, to: QuoteStatus?, data: Data,
        kind: StoredEvent.Kind
    ) throws -> StoredEvent {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO events (at, type, quote_id, mechanic_id, from_state, to_state, data)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(arguments: [
            nowMilliseconds, type, quote.rawValue, mechanic?.rawValue, from?.rawValue, to?.rawValue, data,
        ])
        return StoredEvent(seq: db.lastInsertedRowID, at: SQLiteQuoteStore.date(nowMilliseconds), kind: kind)
    }
}
