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
    private var savepoints: [(lastSeq: Int64, lastQuoteID: Int64, history: (id: Int64, bytes: Data)?)] = []
    /// The history bytes of the quote last read, for the update that usually follows.
    private var history: (id: Int64, bytes: Data)?
    private var countersChanged = false

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

    /// Writes back the numbers handed out: the last statement before `COMMIT`.
    func finish() async throws(StoreError) {
        guard countersChanged else { return }
        try await execute("UPDATE counters SET last_seq = \(lastSeq), last_quote_id = \(lastQuoteID)")
    }

    // MARK: Reading

    func quote(_ id: QuoteID) async throws(StoreError) -> Quote? {
        let rows = try await query("SELECT data, history FROM quotes WHERE id = \(id.rawValue) FOR UPDATE")
        guard let row = rows.first else { return nil }
        let (data, bytes) = try decode(row, as: (Data, Data).self)
        history = (id.rawValue, bytes)
        return try Self.quote(data)
    }

    func quote(idempotencyKey key: String) async throws(StoreError) -> Quote? {
        let rows = try await query("SELECT data FROM quotes WHERE idempotency_key = \(key) FOR UPDATE")
        guard let row = rows.first else { return nil }
        return try Self.quote(try decode(row, as: Data.self))
    }

    func nextQuoteID() async throws(StoreError) -> QuoteID {
        lastQuoteID += 1
        countersChanged = true
        return QuoteID(lastQuoteID)
    }

    // MARK: Quotes

    func insert(_ quote: Quote, idempotencyKey key: String?, history steps: [StateChange]) async throws(StoreError) {
        let bytes = HistoryCodec.appending(steps.map(step), to: Data())
        let submitted = PostgresQuoteStore.milliseconds(quote.submittedAt)
        let updated = PostgresQuoteStore.milliseconds(quote.updatedAt)
        try await execute(
            """
            INSERT INTO quotes (id, state, idempotency_key, mechanic_id, price_cents, currency, submitted_at,
                updated_at, data, history)
            VALUES (\(quote.id.rawValue), \(quote.status.rawValue), \(key), \(quote.mechanic?.id.rawValue),
                \(quote.price?.cents), \(currency.code), \(submitted), \(updated), \(QuoteCodec.encode(quote)), \(bytes))
            """)
        history = (quote.id.rawValue, bytes)
    }

    func update(_ quote: Quote, step: StateChange) async throws(StoreError) {
        let id = quote.id.rawValue
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
        let rows = try await query(
            """
            UPDATE mechanics SET quote_id = \(quote.rawValue), free_since = NULL
            WHERE id = \(mechanic.rawValue) AND quote_id IS NULL AND active AND skill >= \(minimumSkill.rawValue)
            RETURNING id
            """)
        return rows.count == 1
    }

    func claimFirstFree(minimumSkill: Skill, for quote: QuoteID) async throws(StoreError) -> Mechanic? {
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
        let rows = try await query(
            """
            UPDATE mechanics SET quote_id = NULL, free_since = \(nowMilliseconds)
            WHERE id = \(mechanic.rawValue) AND quote_id = \(quote.rawValue) RETURNING id
            """)
        return rows.count == 1
    }

    // MARK: The wait-list

    func oldestWaiting(servableBy mechanic: Mechanic) async throws(StoreError) -> Quote? {
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
        guard !changes.isEmpty else { return [] }
        let at = PostgresQuoteStore.date(nowMilliseconds)
        var events: [StoredEvent] = []
        // One multi-row INSERT for the whole call: one round trip.
        var bindings = PostgresBindings(capacity: changes.count * 9)
        var values: [String] = []
        for kind in changes {
            lastSeq += 1
            let event = StoredEvent(seq: lastSeq, at: at, kind: kind, by: actor)
            events.append(event)
            let mechanic: Int64?
            let from: String?
            let to: String?
            let data: Data
            switch kind {
            case .quote(let previous, let quote):
                (mechanic, from, to, data) = (
                    quote.mechanic?.id.rawValue, previous?.rawValue, quote.status.rawValue, QuoteCodec.encode(quote)
                )
            case .mechanicBusy(let worker, _), .mechanicFree(let worker, _):
                (mechanic, from, to, data) = (worker.id.rawValue, nil, nil, QuoteCodec.encode(worker))
            }
            let base = bindings.count
            bindings.append(event.seq)
            bindings.append(nowMilliseconds)
            bindings.append(event.type)
            bindings.append(event.quoteID.rawValue)
            bindings.append(mechanic)
            bindings.append(from)
            bindings.append(to)
            do {
                try bindings.append(data)
            } catch {
                throw StoreError(.database, "cannot bind event \(event.seq): \(error)")
            }
            bindings.append(actor)
            values.append("(" + (1...9).map { "$\(base + $0)" }.joined(separator: ", ") + ")")
        }
        countersChanged = true
        try await execute(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
                    VALUES \(values.joined(separator: ", "))
                    """, binds: bindings))
        return events
    }

    // MARK: Savepoints

    func savepoint() async throws(StoreError) {
        savepoints.append((lastSeq, lastQuoteID, history))
        try await execute(PostgresQuery(unsafeSQL: "SAVEPOINT s\(savepoints.count)"))
    }

    func rollbackToSavepoint() async throws(StoreError) {
        guard let saved = savepoints.popLast() else { return }
        try await execute(PostgresQuery(unsafeSQL: "ROLLBACK TO SAVEPOINT s\(savepoints.count + 1)"))
        try await execute(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT s\(savepoints.count + 1)"))
        (lastSeq, lastQuoteID, history) = saved
    }

    func releaseSavepoint() async throws(StoreError) {
        guard !savepoints.isEmpty else { return }
        try await execute(PostgresQuery(unsafeSQL: "RELEASE SAVEPOINT s\(savepoints.count)"))
        savepoints.removeLast()
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
        do {
            return try row.decode((repeat each T).self)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
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
