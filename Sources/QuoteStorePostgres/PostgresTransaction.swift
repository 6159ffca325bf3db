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
/// state), a free mechanic or a waiting quote with `FOR UPDATE SKIP LOCKED` (a racing daemon
/// takes the next candidate instead of waiting). The counters row, where event sequence
/// numbers and quote ids come from, is locked as the transaction's first statement and held to
/// its commit: numbers are handed out in commit order with no gap, and a rollback gives them
/// back (see `docs/benchmarks.md` for what that serialisation costs).
final class PostgresTransaction: StoreTransaction {
    let connection: PostgresConnection
    let now: Date
    let nowMilliseconds: Int64
    let currency: Currency
    let logger: Logger
    private var lastSeq: Int64 = 0
    private var lastQuoteID: Int64 = 0
    private var savepoints: [Savepoint] = []
    /// The history bytes of the quote last read, for the update that usually follows.
    private var history: (id: Int64, bytes: Data)?
    private var countersChanged = false
    /// What the transaction will write at its end, in a few multi-row statements: postgres-nio
    /// sends one statement per round trip, and a row per statement would make a batch of a
    /// thousand submissions thousands of round trips.
    private var pending = Pending()
    /// Idempotency keys read ahead (``prefetch(idempotencyKeys:)``): the quote submitted under
    /// each before this transaction, or `nil` for none.
    private var prefetched: [String: Quote?] = [:]

    /// New quotes and events not written yet. A new quote is found here by id or idempotency
    /// key; anything that scans the quotes table writes them first.
    private struct Pending {
        var quotes: [PendingQuote] = []
        var byID: [Int64: Int] = [:]
        var byKey: [String: Int] = [:]
        var events: [PendingEvent] = []
    }

    private struct PendingQuote {
        var quote: Quote
        var key: String?
        var history: Data
        var waitSeq: Int64?
    }

    private struct PendingEvent {
        var event: StoredEvent
        var mechanic: Int64?
        var from: String?
        var to: String?
        var data: Data
    }

    private struct Savepoint {
        var lastSeq: Int64
        var lastQuoteID: Int64
        var history: (id: Int64, bytes: Data)?
        var pending: Pending
        /// Whether `SAVEPOINT` was sent: only before the first statement after it that writes.
        var opened = false
    }

    init(connection: PostgresConnection, now: Date, currency: Currency, logger: Logger) {
        self.connection = connection
        self.now = now
        self.nowMilliseconds = PostgresQuoteStore.milliseconds(now)
        self.currency = currency
        self.logger = logger
    }

    /// Locks the counters row: the transaction's first statement.
    func begin() async throws(StoreError) {
        let rows = try await query("SELECT last_seq, last_quote_id FROM counters FOR UPDATE")
        guard let row = rows.first else { throw StoreError(.corrupt, "the counters row is missing") }
        (lastSeq, lastQuoteID) = try decode(row, as: (Int64, Int64).self)
    }

    /// Writes what is pending, then the numbers handed out: the last statements before `COMMIT`.
    func finish() async throws(StoreError) {
        try await flushQuotes()
        try await flushEvents()
        guard countersChanged else { return }
        try await execute("UPDATE counters SET last_seq = \(lastSeq), last_quote_id = \(lastQuoteID)")
    }

    // MARK: Reading

    func quote(_ id: QuoteID) async throws(StoreError) -> Quote? {
        if let index = pending.byID[id.rawValue] { return pending.quotes[index].quote }
        let rows = try await query("SELECT data, history FROM quotes WHERE id = \(id.rawValue) FOR UPDATE")
        guard let row = rows.first else { return nil }
        let (data, bytes) = try decode(row, as: (Data, Data).self)
        history = (id.rawValue, bytes)
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
        lastQuoteID += 1
        countersChanged = true
        return QuoteID(lastQuoteID)
    }

    // MARK: Quotes

    func insert(_ quote: Quote, idempotencyKey key: String?, history steps: [StateChange]) async throws(StoreError) {
        let bytes = HistoryCodec.appending(steps.map(step), to: Data())
        pending.byID[quote.id.rawValue] = pending.quotes.count
        if let key { pending.byKey[key] = pending.quotes.count }
        pending.quotes.append(PendingQuote(quote: quote, key: key, history: bytes, waitSeq: nil))
    }

    func update(_ quote: Quote, step: StateChange) async throws(StoreError) {
        let id = quote.id.rawValue
        if let index = pending.byID[id] {
            // Not written yet: changed where it waits.
            pending.quotes[index].history = HistoryCodec.appending([self.step(step)], to: pending.quotes[index].history)
            pending.quotes[index].quote = quote
            pending.quotes[index].waitSeq = quote.status == .waiting ? step.seq : nil
            return
        }
        try await willWrite()
        let before: Data
        if let history, history.id == id {
            before = history.bytes
        } else {
            let rows = try await query("SELECT history FROM quotes WHERE id = \(id)")
            before = try rows.first.map { row throws(StoreError) in try decode(row, as: Data.self) } ?? Data()
        }
        let bytes = HistoryCodec.appending([self.step(step)], to: before)
        let waiting = quote.status == .waiting
        let waitSeq: Int64? = waiting ? step.seq : nil
        let waitSkill: Int? = waiting ? quote.request.requiredSkill.rawValue : nil
        let rows = try await query(
            """
            UPDATE quotes SET state = \(quote.status.rawValue), mechanic_id = \(quote.mechanic?.id.rawValue),
                price_cents = \(quote.price?.cents), updated_at = \(PostgresQuoteStore.milliseconds(quote.updatedAt)),
                data = \(QuoteCodec.encode(quote)), history = \(bytes), wait_seq = \(waitSeq),
                wait_skill = \(waitSkill), wait_mechanic = \(quote.waitingFor?.id.rawValue)
            WHERE id = \(id) RETURNING id
            """)
        guard rows.count == 1 else { throw StoreError(.database, "integrity: no quote \(id) to update") }
        history = (id, bytes)
    }

    // MARK: Claims

    func claim(_ mechanic: MechanicID, minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Bool {
        try await willWrite()
        let rows = try await query(
            """
            UPDATE mechanics SET quote_id = \(quote.rawValue), free_since = NULL
            WHERE id = \(mechanic.rawValue) AND quote_id IS NULL AND active AND skill >= \(minimumSkill.rawValue)
            RETURNING id
            """)
        return rows.count == 1
    }

    func claimFirstFree(minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Mechanic? {
        try await willWrite()
        // The pick and the claim in one statement; SKIP LOCKED: a mechanic another daemon's
        // open transaction is claiming is passed over, not waited for.
        let rows = try await query(
            """
            WITH pick AS (
                SELECT id FROM mechanics
                WHERE quote_id IS NULL AND active AND skill >= \(minimumSkill.rawValue)
                ORDER BY skill, free_since, id LIMIT 1
                FOR UPDATE SKIP LOCKED
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

    // MARK: The wait-list

    func oldestWaiting(servableBy mechanic: Mechanic) async throws(StoreError) -> Quote? {
        try await flushQuotes()
        let rows = try await query(
            """
            SELECT id, data, history FROM quotes
            WHERE wait_seq IS NOT NULL AND wait_skill <= \(mechanic.skill.rawValue)
                AND (wait_mechanic IS NULL OR wait_mechanic = \(mechanic.id.rawValue))
            ORDER BY wait_seq LIMIT 1
            FOR UPDATE SKIP LOCKED
            """)
        guard let row = rows.first else { return nil }
        let (id, data, bytes) = try decode(row, as: (Int64, Data, Data).self)
        history = (id, bytes)
        return try Self.quote(data)
    }

    func waitPosition(of quote: QuoteID) async throws(StoreError) -> Int {
        try await flushQuotes()
        let rows = try await query(
            """
            SELECT count(*) FROM quotes
            WHERE wait_seq IS NOT NULL AND wait_seq <= (SELECT wait_seq FROM quotes WHERE id = \(quote.rawValue))
            """)
        guard let row = rows.first else { return 0 }
        let count: Int64 = try decode(row, as: Int64.self)
        return Int(count)
    }

    func freeMechanics() async throws(StoreError) -> [Mechanic] {
        let rows = try await query(
            "SELECT id, name, skill FROM mechanics WHERE quote_id IS NULL AND active ORDER BY skill, free_since, id")
        return try rows.map { row throws(StoreError) in Self.mechanic(try decode(row, as: (Int64, String, Int).self)) }
    }

    // MARK: Events

    func append(_ changes: [StoredEvent.Kind], by actor: String?) async throws(StoreError) -> [StoredEvent] {
        let at = PostgresQuoteStore.date(nowMilliseconds)
        var events: [StoredEvent] = []
        events.reserveCapacity(changes.count)
        for kind in changes {
            lastSeq += 1
            let event = StoredEvent(seq: lastSeq, at: at, kind: kind, by: actor)
            events.append(event)
            switch kind {
            case .quote(let previous, let quote):
                pending.events.append(
                    PendingEvent(
                        event: event, mechanic: quote.mechanic?.id.rawValue, from: previous?.rawValue,
                        to: quote.status.rawValue, data: QuoteCodec.encode(quote)))
            case .mechanicBusy(let worker, _), .mechanicFree(let worker, _):
                pending.events.append(
                    PendingEvent(
                        event: event, mechanic: worker.id.rawValue, from: nil, to: nil, data: QuoteCodec.encode(worker))
                )
            }
        }
        countersChanged = true
        return events
    }

    // MARK: Writing what is pending

    /// Rows per multi-row statement: well under PostgreSQL's 65,535 parameters.
    private static let rowsPerStatement = 2_000

    /// Inserts the pending quotes.
    private func flushQuotes() async throws(StoreError) {
        guard !pending.quotes.isEmpty else { return }
        try await willWrite()
        try await insert(
            pending.quotes,
            into: """
                quotes (id, state, idempotency_key, mechanic_id, price_cents, currency, submitted_at, updated_at, data,
                    history, wait_seq, wait_skill, wait_mechanic)
                """, columns: 13
        ) { entry, bindings throws(StoreError) in
            let quote = entry.quote
            bindings.append(quote.id.rawValue)
            bindings.append(quote.status.rawValue)
            bindings.append(entry.key)
            bindings.append(quote.mechanic?.id.rawValue)
            bindings.append(quote.price?.cents)
            bindings.append(currency.code)
            bindings.append(PostgresQuoteStore.milliseconds(quote.submittedAt))
            bindings.append(PostgresQuoteStore.milliseconds(quote.updatedAt))
            try bind(QuoteCodec.encode(quote), to: &bindings)
            try bind(entry.history, to: &bindings)
            bindings.append(entry.waitSeq)
            bindings.append(entry.waitSeq == nil ? nil : quote.request.requiredSkill.rawValue)
            bindings.append(entry.waitSeq == nil ? nil : quote.waitingFor?.id.rawValue)
        }
        if let last = pending.quotes.last { history = (last.quote.id.rawValue, last.history) }
        pending.quotes = []
        pending.byID = [:]
        pending.byKey = [:]
    }

    /// Inserts the pending events; nothing in the transaction reads them back, so they wait
    /// for its end.
    private func flushEvents() async throws(StoreError) {
        guard !pending.events.isEmpty else { return }
        try await willWrite()
        let now = nowMilliseconds
        try await insert(
            pending.events, into: "events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)",
            columns: 9
        ) { entry, bindings throws(StoreError) in
            bindings.append(entry.event.seq)
            bindings.append(now)
            bindings.append(entry.event.type)
            bindings.append(entry.event.quoteID.rawValue)
            bindings.append(entry.mechanic)
            bindings.append(entry.from)
            bindings.append(entry.to)
            try bind(entry.data, to: &bindings)
            bindings.append(entry.event.by)
        }
        pending.events = []
    }

    /// `INSERT INTO target VALUES (...), (...)` of `rows`, each bound by `bind` as `columns`
    /// values, a few thousand rows a statement.
    private func insert<Row>(
        _ rows: [Row], into target: String, columns: Int,
        bind: (Row, inout PostgresBindings) throws(StoreError) -> Void
    ) async throws(StoreError) {
        for start in stride(from: 0, to: rows.count, by: Self.rowsPerStatement) {
            let chunk = rows[start..<min(start + Self.rowsPerStatement, rows.count)]
            var bindings = PostgresBindings(capacity: chunk.count * columns)
            var values: [String] = []
            values.reserveCapacity(chunk.count)
            for row in chunk {
                let base = bindings.count
                try bind(row, &bindings)
                values.append("(" + (1...columns).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
            }
            try await execute(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO \(target) VALUES \(values.joined(separator: ", "))", binds: bindings))
        }
    }

    private func bind(_ data: Data, to bindings: inout PostgresBindings) throws(StoreError) {
        do {
            try bindings.append(data)
        } catch {
            throw StoreError(.database, "cannot bind \(data.count) bytes: \(error)")
        }
    }

    // MARK: Savepoints

    func savepoint() async throws(StoreError) {
        savepoints.append(
            Savepoint(lastSeq: lastSeq, lastQuoteID: lastQuoteID, history: history, pending: pending))
    }

    func rollbackToSavepoint() async throws(StoreError) {
        guard let saved = savepoints.popLast() else { return }
        if saved.opened {
            let name = "s\(savepoints.count + 1)"
            try await execute(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT \(name)"))
            try await execute(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT \(name)"))
        }
        (lastSeq, lastQuoteID, history, pending) = (saved.lastSeq, saved.lastQuoteID, saved.history, saved.pending)
    }

    func releaseSavepoint() async throws(StoreError) {
        guard let saved = savepoints.popLast() else { return }
        if saved.opened {
            try await execute(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT s\(savepoints.count + 1)"))
        }
    }

    /// Sends the `SAVEPOINT`s not sent yet, before a statement that writes: a command refused
    /// before its first write, or one that only added to what is pending, costs no round trip.
    private func willWrite() async throws(StoreError) {
        for index in savepoints.indices where !savepoints[index].opened {
            try await execute(PostgresQuery(unsafeSQL: "SAVEPOINT s\(index + 1)"))
            savepoints[index].opened = true
        }
    }

    // MARK: Statements

    /// Runs `query`, built by the caller (binding a value may throw), and collects its rows.
    private func query(_ query: @autoclosure () throws -> PostgresQuery) async throws(StoreError) -> [PostgresRow] {
        do {
            return try await connection.query(try query(), logger: logger).collect()
        } catch {
            throw PostgresQuoteStore.storeError(error)
        }
    }

    private func execute(_ query: @autoclosure () throws -> PostgresQuery) async throws(StoreError) {
        _ = try await self.query(try query())
    }

    private func decode<each T: PostgresDecodable>(_ row: PostgresRow, as: (repeat each T).Type) throws(StoreError)
        -> (repeat each T)
    {
        try PostgresQuoteStore.decode(row, as: (repeat each T).self)
    }

    private func step(_ change: StateChange) -> HistoryStep {
        HistoryStep(
            from: change.from, to: change.to, seq: change.seq, at: PostgresQuoteStore.milliseconds(change.at))
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
