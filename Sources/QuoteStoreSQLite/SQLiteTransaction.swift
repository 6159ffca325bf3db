import Foundation
import GRDB
import GRDBSQLite
import QuoteCore
import QuoteStore
import QuoteStoreCodec

/// One `BEGIN IMMEDIATE` transaction of the SQLite store, seen through `StoreTransaction`:
/// only statements, no rules. Each quote row carries its own history (`HistoryCodec`).
///
/// It lives on the store's writer connection, inside one `SQLiteQuoteStore.write(_:)`, and is
/// never used from another thread. Its statements are prepared once for the store
/// (``WriterStatements``), not looked up in GRDB's cache by their text on every call.
final class SQLiteTransaction: StoreTransaction {
    let db: Database
    let now: Date
    let nowMilliseconds: Int64
    /// The catalog's currency, recorded with each new quote; a catalog applied in the
    /// transaction changes it.
    private(set) var currency: Currency
    /// The last quote id handed out in this transaction; read from the table once.
    private var lastQuoteID: Int64?
    /// The last event sequence number handed out in this transaction; read once. Restored
    /// by a rollback, so that the log stays gap-free.
    private var lastSeq: Int64?
    /// The writer's prepared statements, one slot per ``Query``: the store's, lent to one
    /// transaction at a time.
    private let statements: WriterStatements
    /// The history bytes of the quote last read or written, appended to by ``update(_:step:)``
    /// without being decoded (a transition reads its quote, then writes it).
    private var history: (id: Int64, bytes: [UInt8])?
    /// The quote last encoded, so that a row and its event share one encoding.
    private var encoded: (quote: Quote, data: [UInt8])?
    /// The writer's quotes from earlier transactions, and this one's: taken from the store
    /// when the transaction begins, given back when it ends.
    var cache: QuoteCache
    /// Whether ``cache`` was checked against the file in this transaction (``checkCache()``).
    private var cacheChecked = false
    /// Open savepoints, innermost last.
    private var savepoints: [Savepoint] = []
    /// How this transaction changed the number of quotes in each state
    /// (``StateCounts/record(from:to:in:)``); empty while it changed none.
    private(set) var stateChanges: [Int] = []
    /// Where the statements' text and blob parameters are bound from: the store's, lent
    /// to one transaction at a time.
    private let parameters: ParameterArena
    /// New quotes not written yet: written before the next statement (``run(flushing:_:)``),
    /// the next `SAVEPOINT`, and the commit (``writePending()``).
    private var pending = PendingSubmissions()
    /// How many new quotes the transaction held (``PendingSubmissions/held``): the room the
    /// store begins the next one's with.
    var submissionsHeld: Int { pending.held }
    /// Whether a submission with an idempotency key is held like one without: the key is
    /// taken only when a retried request meets its first try, so it is assumed free, and
    /// checked by the unique index when the rows are written (``writePending()``).
    let holdsKeyed: Bool
    /// Set when a held row's key proved taken: the transaction failed, and the store runs it
    /// again with ``holdsKeyed`` off, which asks the index at each insert.
    private(set) var heldKeyTaken = false
    /// Why writing the held rows failed, once it has: every call after fails with it, so that
    /// nothing goes on (or commits) without the rows it was told were stored.
    private var failure: StoreError?

    /// An open savepoint. SQL's `SAVEPOINT` is issued lazily, before the first statement
    /// inside it that may change a row: one that ends before any write costs two counters.
    private struct Savepoint {
        var lastQuoteID: Int64?
        var lastSeq: Int64?
        var history: (id: Int64, bytes: [UInt8])?
        var stateChanges: [Int]
        var opened = false
    }

    /// The statements a transaction runs, each in its slot of the store's ``WriterStatements``.
    enum Query: Int, CaseIterable {
        case quoteByKey, claim, pickFirst, claimPicked, release, load, loadHistory, maxID, insertQuote, updateQuote
        case event, readySubmissionEvents, pendingSubmissionEvents, oldestWaiting, waitPosition, freeMechanics
        case dataVersion, lastSequence
        case insertQuotes4, insertQuotes16, submissionEvents1, submissionEvents4, submissionEvents16
    }

    init(
        db: Database, now: Date, currency: Currency, cache: QuoteCache, parameters: ParameterArena,
        statements: WriterStatements, holdsKeyed: Bool = true, expectedSubmissions: Int = 0
    ) {
        self.holdsKeyed = holdsKeyed
        pending.reserveCapacity(expectedSubmissions)
        self.statements = statements
        self.db = db
        self.parameters = parameters
        self.now = now
        self.currency = currency
        self.cache = cache
        self.nowMilliseconds = StoredTime.milliseconds(now)
    }

    // MARK: Reading

    func quote(_ id: QuoteID) throws(StoreError) -> Quote? {
        try run {
            try checkCache()
            if let entry = cache.entry(id.rawValue) {
                history = (id.rawValue, entry.history)
                return entry.quote
            }
            let statement = try prepared(.load, "SELECT data, history FROM quotes WHERE id = ?")
            guard
                let (data, bytes) = try statement.fetchFirst(
                    in: parameters, binding: { $0.bind(id.rawValue) }, { ($0.bytes(0), $0.bytes(1)) })
            else { return nil }
            history = (id.rawValue, bytes)
            let quote = try QuoteCodec.decodeQuote(data)
            cache.keep(id.rawValue, QuoteCache.Entry(quote: quote, stored: data.count, history: bytes))
            return quote
        }
    }

    func quote(idempotencyKey key: String) throws(StoreError) -> Quote? {
        try run { try quoteRow(idempotencyKey: key) }
    }

    private func quoteRow(idempotencyKey key: String) throws -> Quote? {
        let statement = try prepared(.quoteByKey, "SELECT data FROM quotes WHERE idempotency_key = ?")
        return try statement.fetchFirst(in: parameters, binding: { $0.bind(key) }, { $0.bytes(0) }).map(
            QuoteCodec.decodeQuote)
    }

    /// One more than the highest id, read once per transaction under the write lock. Ids are
    /// never reused once committed: quotes are never deleted.
    func nextQuoteID() throws(StoreError) -> QuoteID {
        try run { QuoteID(try takeQuoteID()) }
    }

    private func takeQuoteID() throws -> Int64 {
        let last: Int64
        if let known = lastQuoteID {
            last = known
        } else {
            last =
                try prepared(.maxID, "SELECT coalesce(max(id), 0) FROM quotes").fetchFirst(
                    in: parameters, binding: { _ in }, { $0.int64(0) }) ?? 0
        }
        guard last < .max else { throw StoreError(.corrupt, "quote ids are exhausted (the last is \(last))") }
        lastQuoteID = last + 1
        return last + 1
    }

    // MARK: Quotes

    /// Holds the new quote's rows (``PendingSubmissions``), unless it has an idempotency key
    /// and the transaction holds none (``holdsKeyed``): then writes them at once and lets the
    /// unique index on `idempotency_key` say whether the key is taken. A failed `INSERT`
    /// undoes only itself, and the key is looked up only then.
    func insertSubmission(
        idempotencyKey key: String?, by actor: String?, _ make: (QuoteID) -> (submitted: Quote, priced: Quote)
    ) throws(StoreError) -> SubmissionInsert {
        try run(flushing: false) {
            try willWrite()
            let id = try takeQuoteID()
            let (submitted, priced) = make(QuoteID(id))
            let first = try nextSeq(count: 2)
            guard priced.status == .ready || priced.status == .pending else {
                throw StoreError(.database, "a submission is priced to ready or pending, not \(priced.status)")
            }
            let history = HistoryCodec.submission(
                pricedTo: priced.status, at: now, submittedSeq: first, pricedSeq: first + 1)
            let row = PendingSubmissions.Row(
                id: id, status: priced.status, idempotencyKey: key, mechanic: priced.mechanic?.id.rawValue,
                priceCents: priced.price?.cents, currency: currency.code,
                submittedAt: StoredTime.milliseconds(priced.submittedAt),
                updatedAt: StoredTime.milliseconds(priced.updatedAt), data: encode(priced), history: history,
                customerEmail: StoredCustomer.email(of: priced), customerName: StoredCustomer.name(of: priced),
                eventSeq: first + 1, eventAt: nowMilliseconds, actor: actor)
            if key == nil || holdsKeyed {
                pending.append(consume row)
            } else {
                try writePending()
                do {
                    try insertQuotes([row][...])
                } catch {
                    // Nothing was written: the id and the numbers go to the next.
                    lastQuoteID = id - 1
                    lastSeq = first - 1
                    guard let key, let taken = error as? DatabaseError,
                        taken.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE,
                        let original = try quoteRow(idempotencyKey: key)
                    else { throw error }
                    return .existing(original)
                }
                try insertEvents([row][...])
            }
            self.history = (id, history)
            StateCounts.record(from: nil, to: priced.status, in: &stateChanges)
            let at = StoredTime.date(nowMilliseconds)
            return .inserted(
                priced,
                events: [
                    StoredEvent(seq: first, at: at, kind: .quote(from: nil, quote: submitted), by: actor),
                    StoredEvent(seq: first + 1, at: at, kind: .quote(from: .submitted, quote: priced), by: actor),
                ])
        }
    }

    /// Writes the rows held, if any: before any other statement, any `SAVEPOINT`, and the
    /// commit. A held row whose idempotency key proves taken fails the transaction with
    /// ``heldKeyTaken`` set: the store runs it again holding no keyed row.
    func writePending() throws(StoreError) {
        if let failure { throw failure }
        guard !pending.isEmpty else { return }
        do throws(StoreError) {
            try run(flushing: false) {
                try willWrite()
                let rows = pending.rows[...]
                do {
                    try insertQuotes(rows)
                } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
                    if holdsKeyed && rows.contains(where: { $0.idempotencyKey != nil }) { heldKeyTaken = true }
                    throw error
                }
                try insertEvents(rows)
            }
            pending.removeAll()
        } catch {
            failure = error
            throw error
        }
    }

    /// Inserts the quote rows of `rows`, a few to a statement.
    private func insertQuotes(_ rows: ArraySlice<PendingSubmissions.Row>) throws {
        try insert(
            rows, statements: (.insertQuotes16, .insertQuotes4, .insertQuote), PendingSubmissions.quotesSQL(rows:),
            PendingSubmissions.bindQuote(_:to:))
    }

    /// Inserts the event rows of `rows`, a few to a statement.
    private func insertEvents(_ rows: ArraySlice<PendingSubmissions.Row>) throws {
        try insert(
            rows, statements: (.submissionEvents16, .submissionEvents4, .submissionEvents1),
            PendingSubmissions.eventsSQL(rows:), PendingSubmissions.bindEvent(_:to:))
    }

    /// Inserts `rows` through the statements of 16, 4 and 1 rows (``PendingSubmissions/chunk(_:)``),
    /// whose text `sql` gives, each row's values bound by `bind`.
    private func insert(
        _ rows: ArraySlice<PendingSubmissions.Row>, statements: (sixteen: Query, four: Query, one: Query),
        _ sql: (Int) -> String, _ bind: (UnsafePointer<PendingSubmissions.Row>, inout Bindings) -> Void
    ) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            let size = PendingSubmissions.chunk(rows.endIndex - start)
            let statement = try prepared(
                size == 16 ? statements.sixteen : size == 4 ? statements.four : statements.one, sql(size))
            let offset = start - rows.startIndex
            try rows.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                // Each row read where it lies, not copied out (a copy retains its strings).
                try statement.execute(in: parameters) { bindings in
                    for index in offset..<(offset + size) { bind(base + index, &bindings) }
                }
            }
            start += size
        }
    }

    func update(_ quote: Quote, step: StateChange) throws(StoreError) {
        try run {
            try willWrite()
            try checkCache()
            let id = quote.id.rawValue
            let before: [UInt8]
            if let history, history.id == id {
                before = history.bytes
            } else {
                let statement = try prepared(.loadHistory, "SELECT history FROM quotes WHERE id = ?")
                before = try statement.fetchFirst(in: parameters, binding: { $0.bind(id) }, { $0.bytes(0) }) ?? []
            }
            let bytes = HistoryCodec.appending([step], to: before)
            let statement = try prepared(
                .updateQuote,
                """
                UPDATE quotes SET state = ?, mechanic_id = ?, price_cents = ?, updated_at = ?, data = ?, history = ?,
                    wait_seq = ?, wait_skill = ?, wait_mechanic = ?
                WHERE id = ?
                """)
            let data = encode(quote)
            let waiting = quote.status == .waiting
            try statement.execute(in: parameters) {
                $0.bind(quote.status.rawValue)
                $0.bind(quote.mechanic?.id.rawValue)
                $0.bind(quote.price?.cents)
                $0.bind(StoredTime.milliseconds(quote.updatedAt))
                $0.bind(data)
                $0.bind(bytes)
                $0.bind(waiting ? step.seq : nil)
                $0.bind(waiting ? Int64(quote.request.requiredSkill.rawValue) : nil)
                $0.bind(quote.waitingFor?.id.rawValue)
                $0.bind(id)
            }
            guard db.changesCount == 1 else {
                throw DatabaseError(resultCode: .SQLITE_CONSTRAINT, message: "integrity: no quote \(id) to update")
            }
            history = (id, bytes)
            cache.keep(id, QuoteCache.Entry(quote: quote, stored: data.count, history: bytes))
            StateCounts.record(from: step.from, to: quote.status, in: &stateChanges)
        }
    }

    // MARK: Claims

    func claim(_ mechanic: MechanicID, minimumSkill: Skill, for quote: QuoteID) throws(StoreError) -> Bool {
        try run {
            try willWrite()
            let statement = try prepared(
                .claim,
                """
                UPDATE mechanics SET quote_id = ?, free_since = NULL
                WHERE id = ? AND quote_id IS NULL AND active = 1 AND on_duty = 1 AND skill >= ?
                """)
            try statement.execute(in: parameters) {
                $0.bind(quote.rawValue)
                $0.bind(mechanic.rawValue)
                $0.bind(Int64(minimumSkill.rawValue))
            }
            return db.changesCount == 1
        }
    }

    /// Picks through the `mechanics_free` index in `DispatchOrder` (`ORDER BY skill,
    /// free_since, id`), then claims by id: two statements under the transaction's write
    /// lock, so no other writer comes between them.
    func claimFirstFree(minimumSkill: Skill, for quote: QuoteID, excluding: MechanicID?) throws(StoreError)
        -> Mechanic?
    {
        try run {
            let pick = try prepared(
                .pickFirst,
                """
                SELECT id, name, skill FROM mechanics
                WHERE quote_id IS NULL AND active = 1 AND on_duty = 1 AND skill >= ? AND id IS NOT ?
                ORDER BY skill, free_since, id LIMIT 1
                """)
            guard
                let mechanic = try pick.fetchFirst(
                    in: parameters,
                    binding: {
                        $0.bind(Int64(minimumSkill.rawValue))
                        $0.bind(excluding?.rawValue)
                    },
                    { row in
                        Mechanic(
                            id: MechanicID(row.int64(0)), name: row.string(1),
                            skill: Skill(rawValue: Int(row.int64(2))) ?? .junior)
                    })
            else { return nil }
            try willWrite()
            let claim = try prepared(
                .claimPicked, "UPDATE mechanics SET quote_id = ?, free_since = NULL WHERE id = ? AND quote_id IS NULL")
            try claim.execute(in: parameters) {
                $0.bind(quote.rawValue)
                $0.bind(mechanic.id.rawValue)
            }
            guard db.changesCount == 1 else {
                throw DatabaseError(
                    resultCode: .SQLITE_CONSTRAINT,
                    message: "integrity: free mechanic \(mechanic.id) could not be claimed")
            }
            return mechanic
        }
    }

    func release(_ mechanic: MechanicID, from quote: QuoteID) throws(StoreError) -> Bool {
        try run {
            try willWrite()
            let statement = try prepared(
                .release, "UPDATE mechanics SET quote_id = NULL, free_since = ? WHERE id = ? AND quote_id = ?")
            try statement.execute(in: parameters) {
                $0.bind(nowMilliseconds)
                $0.bind(mechanic.rawValue)
                $0.bind(quote.rawValue)
            }
            return db.changesCount == 1
        }
    }

    // MARK: The wait-list

    func oldestWaiting(servableBy mechanic: Mechanic) throws(StoreError) -> Quote? {
        try run {
            let statement = try prepared(
                .oldestWaiting,
                """
                SELECT id, data, history FROM quotes
                WHERE wait_seq IS NOT NULL AND wait_skill <= ? AND (wait_mechanic IS NULL OR wait_mechanic = ?)
                ORDER BY wait_seq LIMIT 1
                """)
            guard
                let (id, data, bytes) = try statement.fetchFirst(
                    in: parameters,
                    binding: {
                        $0.bind(Int64(mechanic.skill.rawValue))
                        $0.bind(mechanic.id.rawValue)
                    }, { ($0.int64(0), $0.bytes(1), $0.bytes(2)) })
            else { return nil }
            history = (id, bytes)
            return try QuoteCodec.decodeQuote(data)
        }
    }

    func waitPosition(of quote: QuoteID) throws(StoreError) -> Int {
        try run {
            let statement = try prepared(
                .waitPosition,
                """
                SELECT count(*) FROM quotes
                WHERE wait_seq IS NOT NULL AND wait_seq <= (SELECT wait_seq FROM quotes WHERE id = ?)
                """)
            return Int(
                try statement.fetchFirst(in: parameters, binding: { $0.bind(quote.rawValue) }, { $0.int64(0) }) ?? 0)
        }
    }

    func freeMechanics() throws(StoreError) -> [Mechanic] {
        try run {
            let statement = try prepared(
                .freeMechanics,
                """
                SELECT id, name, skill FROM mechanics WHERE quote_id IS NULL AND active = 1 AND on_duty = 1
                ORDER BY skill, free_since, id
                """)
            return try Row.fetchAll(statement).map { row in
                Mechanic(
                    id: MechanicID(try row.decode(atIndex: 0)), name: try row.decode(atIndex: 1),
                    skill: Skill(rawValue: try row.decode(atIndex: 2)) ?? .junior)
            }
        }
    }

    func setDuty(_ mechanic: MechanicID, onDuty: Bool) throws(StoreError) -> Bool {
        try run {
            try willWrite()
            try db.execute(
                sql: "UPDATE mechanics SET on_duty = ? WHERE id = ? AND active = 1 AND on_duty = ?",
                arguments: [onDuty, mechanic.rawValue, !onDuty])
            return db.changesCount == 1
        }
    }

    func putFirstInLine(_ quote: QuoteID) throws(StoreError) {
        try run {
            try willWrite()
            try db.execute(
                sql: """
                    UPDATE quotes SET wait_seq = (SELECT min(wait_seq) FROM quotes WHERE wait_seq IS NOT NULL) - 1
                    WHERE id = ? AND wait_seq IS NOT NULL
                    """, arguments: [quote.rawValue])
        }
    }

    // MARK: Events

    func append(_ changes: [StoredEvent.Kind], by actor: String?) throws(StoreError) -> [StoredEvent] {
        try run {
            try willWrite()
            if let submitted = StoredEventRow.submission(changes), case .quote(_, let priced) = changes[1] {
                return try appendSubmission(submitted, priced: priced, by: actor, first: try nextSeq(count: 2))
            }
            return try changes.map { try appendOne($0, by: actor) }
        }
    }

    /// A new quote's two steps, `submitted` then its priced state, as two events with
    /// consecutive sequence numbers, in one row: the priced state's, which stands for the
    /// `quote.submitted` before it (``StoredEventRow``), numbered `first` and `first + 1`.
    private func appendSubmission(
        _ submitted: Quote, priced: Quote, by actor: String?, first: Int64
    ) throws -> [StoredEvent] {
        // The states are closed enums, written into the SQL rather than bound: a text bind
        // copies into a fresh SQLite allocation.
        let status = priced.status
        guard status == .ready || status == .pending else {
            throw StoreError(.database, "a submission is priced to ready or pending, not \(status)")
        }
        let statement = try prepared(
            status == .ready ? .readySubmissionEvents : .pendingSubmissionEvents,
            """
            INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
            VALUES (?, ?, 'quote.\(status.rawValue)', ?, NULL, 'submitted', '\(status.rawValue)', ?, ?)
            """)
        let data = encode(priced)
        try statement.execute(in: parameters) {
            $0.bind(first + 1)
            $0.bind(nowMilliseconds)
            $0.bind(submitted.id.rawValue)
            $0.bind(data)
            $0.bind(actor)
        }
        let at = StoredTime.date(nowMilliseconds)
        return [
            StoredEvent(seq: first, at: at, kind: .quote(from: nil, quote: submitted), by: actor),
            StoredEvent(seq: first + 1, at: at, kind: .quote(from: .submitted, quote: priced), by: actor),
        ]
    }

    private func appendOne(_ kind: StoredEvent.Kind, by actor: String?) throws -> StoredEvent {
        let statement = try prepared(
            .event,
            """
            INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let seq = try nextSeq()
        let event = StoredEvent(seq: seq, at: StoredTime.date(nowMilliseconds), kind: kind, by: actor)
        let mechanic: MechanicID?
        let from: QuoteStatus?
        let to: QuoteStatus?
        let data: [UInt8]
        if case .quote(let previous, let quote) = kind {
            // The quote's row has the same bytes: encoded once for both.
            (mechanic, from, to, data) = (quote.mechanic?.id, previous, quote.status, encode(quote))
        } else {
            (mechanic, from, to, data) = kind.columns
        }
        try statement.execute(in: parameters) {
            $0.bind(seq)
            $0.bind(nowMilliseconds)
            $0.bind(event.type)
            $0.bind(event.quoteID?.rawValue ?? StoredEvent.Kind.noQuote)
            $0.bind(mechanic?.rawValue)
            $0.bind(from?.rawValue)
            $0.bind(to?.rawValue)
            $0.bind(data)
            $0.bind(actor)
        }
        return event
    }

    /// The first of the next `count` event sequence numbers: one more than the highest ever
    /// handed out, read once per transaction under the write lock.
    private func nextSeq(count: Int64 = 1) throws -> Int64 {
        let last =
            try lastSeq
            ?? prepared(.lastSequence, SQLiteQuoteStore.lastSequenceSQL).fetchFirst(
                in: parameters, binding: { _ in }, { $0.int64(0) }) ?? 0
        let (next, overflow) = last.addingReportingOverflow(count)
        guard !overflow else { throw StoreError(.corrupt, "event seqs are exhausted (the last is \(last))") }
        lastSeq = next
        return last + 1
    }

    // MARK: Savepoints

    /// Writes the rows held first: each savepoint holds only rows inserted since it began,
    /// so that a rollback to it drops all that are held.
    func savepoint() throws(StoreError) {
        try writePending()
        savepoints.append(
            Savepoint(lastQuoteID: lastQuoteID, lastSeq: lastSeq, history: history, stateChanges: stateChanges))
    }

    func rollbackToSavepoint() throws(StoreError) {
        guard let savepoint = savepoints.popLast() else { throw StoreError(.database, "no savepoint is open") }
        // First: whether or not the rollback below succeeds, what was kept may not be the rows.
        cache.discardTransaction()
        // Every row held was inserted since the savepoint began (``savepoint()``).
        pending.removeAll()
        try run(flushing: false) {
            if savepoint.opened {
                let name = Self.savepointName(depth: savepoints.count)
                try db.cachedStatement(sql: "ROLLBACK TO SAVEPOINT \(name)").execute()
                try db.cachedStatement(sql: "RELEASE SAVEPOINT \(name)").execute()
            }
        }
        lastQuoteID = savepoint.lastQuoteID
        lastSeq = savepoint.lastSeq
        history = savepoint.history
        stateChanges = savepoint.stateChanges
    }

    func releaseSavepoint() throws(StoreError) {
        guard let savepoint = savepoints.popLast() else { throw StoreError(.database, "no savepoint is open") }
        guard savepoint.opened else { return }
        // The rows held stay held, now the enclosing savepoint's (or the transaction's).
        try run(flushing: false) {
            try db.cachedStatement(sql: "RELEASE SAVEPOINT \(Self.savepointName(depth: savepoints.count))").execute()
        }
    }

    /// Issues `SAVEPOINT` for every open savepoint that has none yet, outermost first: called
    /// before any statement that may change a row.
    private func willWrite() throws {
        guard let last = savepoints.last, !last.opened else { return }
        // In a transaction SQLite rolled back on its own (an I/O error, a full disk), a
        // `SAVEPOINT` would open a new one, which the batch's `COMMIT` would then commit: the
        // rest of a batch without its start. Refused instead, as GRDB's transaction block did.
        guard sqlite3_get_autocommit(db.sqliteConnection) == 0 else {
            throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back")
        }
        for depth in savepoints.indices where !savepoints[depth].opened {
            try db.cachedStatement(sql: "SAVEPOINT \(Self.savepointName(depth: depth))").execute()
            savepoints[depth].opened = true
        }
    }

    private static func savepointName(depth: Int) -> String { "command\(depth)" }

    // MARK: Helpers

    /// The prepared statement for `query`, whose text is `sql`. One with parameters is only
    /// ever run through `execute(in:binding:)` or `fetchFirst(in:binding:_:)`, which bind every
    /// parameter before each step: never through GRDB's own API, which could step it with
    /// the stale bindings the last run left pointing into the store's ``ParameterArena``.
    private func prepared(_ query: Query, _ sql: @autoclosure () -> String) throws -> Statement {
        try statements.statement(query.rawValue, on: db, sql)
    }

    /// Before the transaction's first use of ``cache``: empties it if another connection
    /// committed since the writer last used it (`PRAGMA data_version`, read under the write
    /// lock). A transaction that never uses it (submissions only) pays nothing.
    private func checkCache() throws {
        guard !cacheChecked else { return }
        let version = try prepared(.dataVersion, "PRAGMA data_version").fetchFirst(
            in: parameters, binding: { _ in }, { $0.int64(0) })
        cache.begin(dataVersion: version ?? 0)
        cacheChecked = true
    }

    /// `quote`'s stored form, encoded once for its row and its event.
    private func encode(_ quote: Quote) -> [UInt8] {
        if let encoded, encoded.quote == quote { return encoded.data }
        let data = QuoteCodec.encode(quote)
        encoded = (quote, data)
        return data
    }

    /// `body`, its database failures as `StoreError`; with `flushing`, after the rows held
    /// are written, so that what `body` runs sees them.
    private func run<T>(flushing: Bool = true, _ body: () throws -> T) throws(StoreError) -> T {
        if flushing { try writePending() }
        do {
            return try body()
        } catch {
            throw SQLiteQuoteStore.storeError(error)
        }
    }
}

// MARK: The catalog

extension SQLiteTransaction {
    /// One writer: every change is serialized already.
    func catalogVersion(forChange: Bool) throws(StoreError) -> Int64 {
        try run { try Int64.fetchOne(db, sql: "SELECT version FROM catalog_version") ?? 0 }
    }

    func catalog() throws(StoreError) -> Catalog {
        try run {
            guard let catalog = try SQLiteQuoteStore.loadCatalog(db) else {
                throw StoreError(.corrupt, "the store holds no catalog")
            }
            return catalog
        }
    }

    func nextMechanicID() throws(StoreError) -> MechanicID? {
        let last = try run { try Int64.fetchOne(db, sql: "SELECT max(id) FROM mechanics") ?? 0 }
        let (next, overflow) = last.addingReportingOverflow(1)
        return overflow ? nil : MechanicID(next)
    }

    func addMechanic(_ mechanic: Mechanic) throws(StoreError) {
        try run {
            try willWrite()
            try db.execute(
                sql: """
                    INSERT INTO mechanics (id, name, skill, active, quote_id, free_since, on_duty)
                    VALUES (?, ?, ?, 1, NULL, 0, 1)
                    """, arguments: [mechanic.id.rawValue, mechanic.name, mechanic.skill.rawValue])
        }
    }

    func updateMechanic(_ mechanic: MechanicID, skill: Skill) throws(StoreError) {
        try run {
            try willWrite()
            try db.execute(
                sql: "UPDATE mechanics SET skill = ? WHERE id = ? AND active = 1",
                arguments: [skill.rawValue, mechanic.rawValue])
        }
    }

    func retireMechanic(_ mechanic: MechanicID) throws(StoreError) {
        try run {
            try willWrite()
            try db.execute(sql: "UPDATE mechanics SET active = 0 WHERE id = ?", arguments: [mechanic.rawValue])
        }
    }

    func replaceCatalog(_ catalog: Catalog) throws(StoreError) {
        try run {
            try willWrite()
            try SQLiteQuoteStore.sync(newCatalog: catalog, into: db)
        }
        currency = catalog.currency
    }

    func recordCatalog(_ catalog: Catalog) throws(StoreError) {
        try run {
            try willWrite()
            try SQLiteQuoteStore.record(catalog, into: db, at: nowMilliseconds)
        }
    }

    func quotesWaiting(for mechanic: MechanicID) throws(StoreError) -> [QuoteID] {
        try run {
            try Int64.fetchAll(
                db, sql: "SELECT id FROM quotes WHERE wait_seq IS NOT NULL AND wait_mechanic = ? ORDER BY wait_seq",
                arguments: [mechanic.rawValue]
            ).map(QuoteID.init)
        }
    }

    func isOnDuty(_ mechanic: MechanicID) throws(StoreError) -> Bool? {
        try run {
            try Bool.fetchOne(
                db, sql: "SELECT on_duty = 1 FROM mechanics WHERE id = ? AND active = 1", arguments: [mechanic.rawValue]
            )
        }
    }

    func hasOpenQuotes() throws(StoreError) -> Bool {
        try run {
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM quotes WHERE state NOT IN ('completed', 'cancelled'))") ?? false
        }
    }
}
