public import Foundation
import Logging
import PostgresNIO
public import QuoteCore
public import QuoteStore
import QuoteStoreCodec
import Synchronization

extension PostgresQuoteStore {
    public func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord? {
        let rows = try await query("SELECT data, history FROM quotes WHERE id = \(id.rawValue)")
        guard let row = rows.first else { return nil }
        let (data, bytes) = try Self.decode(row, as: (Data, Data).self)
        let history: [StateChange]
        do {
            history = try HistoryCodec.decode(bytes)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
        return QuoteRecord(quote: try PostgresTransaction.quote(data), history: history)
    }

    public func quote(idempotencyKey key: String) async throws(StoreError) -> Quote? {
        let rows = try await query("SELECT data FROM quotes WHERE idempotency_key = \(key)")
        return try rows.first.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func quotes(
        status: QuoteStatus?, customer: CustomerSearch?, afterID: QuoteID?, limit: Int, examining: Int
    ) async throws(StoreError) -> QuotePage {
        let after = afterID?.rawValue ?? 0
        let examining = max(1, examining)
        switch customer {
        case nil:
            // Every quote examined is one found: by state through its index, or all by id.
            var binds = PostgresBindings(capacity: 3)
            var sql = "SELECT data FROM quotes WHERE id > \(Self.parameter(after, in: &binds))"
            if let status { sql += " AND state = \(Self.parameter(status.rawValue, in: &binds))" }
            sql += " ORDER BY id LIMIT \(Self.parameter(Int64(limit), in: &binds))"
            return QuotePage(quotes: try await decodeQuotes(query(PostgresQuery(unsafeSQL: sql, binds: binds))))
        case .email(let email)?:
            return try await examine(
                ("customer_email", email), status: status, namePrefix: nil, after: after, limit: limit,
                examining: examining)
        case .namePrefix(let prefix)?:
            // `^@` (starts with) is a range of the name index, whose collation is "C". The index
            // gives the matches by name, not by id: they are all read and sorted, so only while
            // there are few in all (`after` cannot narrow the range: counting only those past it
            // would read every match before it).
            let counted = try await query(
                """
                SELECT count(*) FROM (SELECT 1 FROM quotes WHERE customer_name ^@ \(prefix)
                    ORDER BY customer_name, id LIMIT \(Int64(examining) + 1)) s
                """)
            let matches: Int64 =
                try counted.first.map { row throws(StoreError) in try Self.decode(row, as: Int64.self) } ?? 0
            if matches <= Int64(examining) {
                var binds = PostgresBindings(capacity: 5)
                // Materialized: the few matches first, through the name index (in its order, so
                // that no other plan is cheaper), then each looked up by id.
                var sql = """
                    WITH m AS MATERIALIZED (SELECT id FROM quotes
                        WHERE customer_name ^@ \(Self.parameter(prefix, in: &binds))
                        ORDER BY customer_name, id LIMIT \(Self.parameter(Int64(examining) + 1, in: &binds)))
                    SELECT q.data FROM m CROSS JOIN LATERAL (SELECT data, state FROM quotes WHERE id = m.id OFFSET 0) q
                    WHERE m.id > \(Self.parameter(after, in: &binds))
                    """
                if let status { sql += " AND q.state = \(Self.parameter(status.rawValue, in: &binds))" }
                sql += " ORDER BY m.id LIMIT \(Self.parameter(Int64(limit), in: &binds))"
                return QuotePage(quotes: try await decodeQuotes(query(PostgresQuery(unsafeSQL: sql, binds: binds))))
            }
            // Too many to sort: the quotes in id order (of the state asked, through its index),
            // the next `examining` of them, checked for the name.
            guard let status else {
                return try await examine(
                    nil, status: nil, namePrefix: prefix, after: after, limit: limit, examining: examining)
            }
            return try await examine(
                ("state", status.rawValue), status: nil, namePrefix: prefix, after: after, limit: limit,
                examining: examining)
        }
    }

    /// The quotes among the next `examining` after `after` in id order (those whose `column`
    /// holds `value`, through its index on (`column`, id), when set), in `status` and of
    /// `namePrefix` when set, at most `limit`; and, when the page is not full and `examining`
    /// were examined, the last examined. One statement: one snapshot for the page and for
    /// where it stopped.
    private func examine(
        _ driving: (column: String, value: String)?, status: QuoteStatus?, namePrefix: String?, after: Int64,
        limit: Int, examining: Int
    ) async throws(StoreError) -> QuotePage {
        var binds = PostgresBindings(capacity: 6)
        // Ordered as the index is, so that only it gives the candidates in order.
        let candidates: String
        if let driving {
            candidates = """
                SELECT id FROM quotes WHERE \(driving.column) = \(Self.parameter(driving.value, in: &binds))
                    AND id > \(Self.parameter(after, in: &binds))
                    ORDER BY \(driving.column), id LIMIT \(Self.parameter(Int64(examining), in: &binds))
                """
        } else {
            candidates = """
                SELECT id FROM quotes WHERE id > \(Self.parameter(after, in: &binds))
                    ORDER BY id LIMIT \(Self.parameter(Int64(examining), in: &binds))
                """
        }
        var filter = ""
        if let status { filter += " AND q.state = \(Self.parameter(status.rawValue, in: &binds))" }
        if let namePrefix { filter += " AND q.customer_name ^@ \(Self.parameter(namePrefix, in: &binds))" }
        // Each candidate looked up by id; the page, then one row saying how many were examined
        // and the last.
        let sql = """
            WITH c AS MATERIALIZED (\(candidates))
            SELECT data, examined, last FROM (
                (SELECT q.data, NULL::bigint AS examined, NULL::bigint AS last, c.id AS position FROM c
                    CROSS JOIN LATERAL (SELECT data, state, customer_name FROM quotes WHERE id = c.id OFFSET 0) q
                    WHERE TRUE\(filter) ORDER BY c.id LIMIT \(Self.parameter(Int64(limit), in: &binds)))
                UNION ALL
                SELECT NULL::bytea, count(*), max(id), NULL FROM c
            ) page ORDER BY position NULLS LAST
            """
        let rows = try await query(PostgresQuery(unsafeSQL: sql, binds: binds))
        var quotes: [Quote] = []
        var examined: Int64 = 0
        var last: Int64?
        for row in rows {
            let (data, count, through) = try Self.decode(row, as: (Data?, Int64?, Int64?).self)
            if let data {
                quotes.append(try PostgresTransaction.quote(data))
            } else {
                examined = count ?? 0
                last = through
            }
        }
        guard quotes.count < limit, examined == Int64(examining), let last else { return QuotePage(quotes: quotes) }
        return QuotePage(quotes: quotes, examinedThrough: QuoteID(last))
    }

    /// Appends `value` to `binds` and returns its placeholder (`$n`).
    private static func parameter(_ value: some PostgresNonThrowingEncodable, in binds: inout PostgresBindings)
        -> String
    {
        binds.append(value)
        return "$\(binds.count)"
    }

    private func decodeQuotes(_ rows: [PostgresRow]) throws(StoreError) -> [Quote] {
        try rows.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote] {
        let rows = try await query(
            "SELECT data FROM quotes WHERE wait_seq IS NOT NULL ORDER BY wait_seq, id LIMIT \(limit)")
        return try rows.map { row throws(StoreError) in
            try PostgresTransaction.quote(try Self.decode(row, as: Data.self))
        }
    }

    public func longestWaitingSince() async throws(StoreError) -> Date? {
        // A waiting quote's `updated_at` is when it started waiting: nothing else changes it.
        let rows = try await query("SELECT min(updated_at) FROM quotes WHERE wait_seq IS NOT NULL")
        guard let row = rows.first else { return nil }
        let least: Int64? = try Self.decode(row, as: Int64?.self)
        return least.map(StoredTime.date)
    }

    public func mechanics() async throws(StoreError) -> [MechanicState] {
        let rows = try await query(
            "SELECT id, name, skill, quote_id, free_since, on_duty FROM mechanics WHERE active ORDER BY id")
        return try rows.map { row throws(StoreError) in
            let (id, name, skill, quote, freeSince, onDuty) = try Self.decode(
                row, as: (Int64, String, Int, Int64?, Int64?, Bool).self)
            return MechanicState(
                mechanic: PostgresTransaction.mechanic((id, name, skill)), quote: quote.map(QuoteID.init),
                freeSince: freeSince.map(StoredTime.date), onDuty: onDuty)
        }
    }

    public func mechanicCounts() async throws(StoreError) -> MechanicCounts {
        let rows = try await query(
            """
            SELECT count(quote_id), count(*) FILTER (WHERE quote_id IS NULL AND on_duty), count(*) FILTER (WHERE NOT on_duty)
            FROM mechanics WHERE active
            """)
        guard let row = rows.first else { return MechanicCounts(busy: 0, free: 0, offDuty: 0) }
        let (busy, free, offDuty) = try Self.decode(row, as: (Int64, Int64, Int64).self)
        return MechanicCounts(busy: Int(busy), free: Int(free), offDuty: Int(offDuty))
    }

    public func counts() async throws(StoreError) -> [QuoteStatus: Int] {
        var counts = Dictionary(uniqueKeysWithValues: QuoteStatus.allCases.map { ($0, 0) })
        for row in try await query("SELECT state, count(*) FROM quotes GROUP BY state") {
            let (state, count) = try Self.decode(row, as: (String, Int64).self)
            if let status = QuoteStatus(rawValue: state) { counts[status] = Int(count) }
        }
        return counts
    }

    public func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent] {
        // One row more than the page, in the same statement (one snapshot, which pruning
        // cannot cut between): the row after a bare submission (data from before v8) that
        // ends the page.
        let statement: PostgresQuery = """
            SELECT seq, at, type, quote_id, from_state, data, actor FROM events
            WHERE seq > \(after) ORDER BY seq LIMIT \(StoredEventRow.rowsToRead(forPage: limit))
            """
        let (logger, replication) = (logger, replication)
        let rows = try await withConnection { connection throws(StoreError) in
            let rows: [PostgresRow]
            do {
                rows = try await connection.query(statement, logger: logger).collect()
            } catch {
                throw Self.storeError(error)
            }
            // Events a synchronous standby may not have (a commit whose wait was cancelled)
            // are not handed out, to subscribers or to another daemon's tail: after a failover
            // they would be gone, and their numbers given to other events.
            guard !rows.isEmpty else { return rows }
            do throws(StoreError) {
                try await Self.confirmReplicated(connection, replication)
            } catch {
                // Not `unavailable`: the server answers, and is not to be given up on for it.
                throw StoreError(
                    .database,
                    "PostgreSQL: events no synchronous standby has confirmed are not read out (\(error.message))")
            }
            return rows
        }.map(Self.eventRow)
        do {
            return try StoredEventRow.page(rows, after: after, limit: limit)
        } catch {
            throw StoreError(.corrupt, "\(error)")
        }
    }

    /// The columns of an event's `row` (seq, at, type, quote_id, from_state, data, actor).
    private static func eventRow(_ row: PostgresRow) throws(StoreError) -> StoredEventRow {
        let (seq, at, type, quote, from, data, by) = try decode(
            row, as: (Int64, Int64, String, Int64, String?, Data, String?).self)
        return StoredEventRow(seq: seq, at: at, type: type, quote: quote, from: from, data: data, by: by)
    }

    public func catalogVersion() async throws(StoreError) -> Int64 {
        let rows = try await query("SELECT version FROM catalog_version")
        return try rows.first.map { row throws(StoreError) in try Self.decode(row, as: Int64.self) } ?? 0
    }

    public func lastSequence() async throws(StoreError) -> Int64 {
        let rows = try await query("SELECT last_seq FROM counters")
        return try rows.first.map { row throws(StoreError) in try Self.decode(row, as: Int64.self) } ?? 0
    }

    public func pruneEvents(now: Date, limit: Int) async throws(StoreError) -> Int {
        let cutoff = StoredTime.milliseconds(now) - retention.minimumAge.milliseconds
        let keep = Int64(retention.minimumCount)
        // Counted by the server: the rows deleted do not come back. Events, not rows: a new
        // quote's priced row stands for its quote.submitted too, unless that has a row of its
        // own (`StoredEventRow`), which never goes without the row after it; the subquery sees
        // the log as it was before the delete.
        let rows = try await query(
            """
            WITH picked AS (
                SELECT seq, type FROM events WHERE seq <= (SELECT last_seq FROM counters) - \(keep)
                    AND at < \(cutoff) ORDER BY seq LIMIT \(Int64(limit))),
            gone AS (
                DELETE FROM events e WHERE seq IN (SELECT seq FROM picked WHERE \(unescaped: StoredEventRow.keepsPairSQL))
                RETURNING CASE WHEN \(unescaped: StoredEventRow.holdsTwoSQL) THEN 2 ELSE 1 END AS events)
            SELECT coalesce(sum(events), 0)::bigint FROM gone
            """)
        let pruned: Int64 = try rows.first.map { row throws(StoreError) in try Self.decode(row, as: Int64.self) } ?? 0
        return Int(clamping: pruned)
    }

    public func integrityViolations() async throws(StoreError) -> [IntegrityViolation] {
        var found: [IntegrityViolation] = []
        for row in try await query(
            """
            SELECT q.id, q.mechanic_id FROM quotes q LEFT JOIN mechanics m ON m.id = q.mechanic_id
            WHERE q.state = 'booked' AND (m.quote_id IS NULL OR m.quote_id != q.id)
            """)
        {
            let (quote, mechanic) = try Self.decode(row, as: (Int64, Int64?).self)
            found.append(.bookedWithoutMechanic(quote: quote, mechanic: mechanic))
        }
        for row in try await query(
            """
            SELECT m.id, m.quote_id FROM mechanics m LEFT JOIN quotes q ON q.id = m.quote_id
            WHERE m.quote_id IS NOT NULL AND (q.state IS DISTINCT FROM 'booked' OR q.mechanic_id IS DISTINCT FROM m.id)
            """)
        {
            let (mechanic, quote) = try Self.decode(row, as: (Int64, Int64).self)
            found.append(.heldWithoutBooking(mechanic: mechanic, quote: quote))
        }
        return found
    }
}
