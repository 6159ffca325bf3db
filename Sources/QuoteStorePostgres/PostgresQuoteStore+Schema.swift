import Foundation
import Logging
import PostgresNIO
import QuoteCore
import QuoteStore
import QuoteStoreCodec

extension PostgresQuoteStore {
    /// The versioned schema, applied in order. Migrations only ever append: a released one is
    /// never edited.
    static let migrations: [(id: String, sql: [PostgresQuery])] = [
        (
            "v1: catalog, quotes, events, counters",
            [
                """
                CREATE TABLE services (
                    name TEXT PRIMARY KEY,
                    minimum_skill INT NOT NULL CHECK (minimum_skill BETWEEN 1 AND 4),
                    price_cents BIGINT NOT NULL CHECK (price_cents >= 0),
                    currency TEXT NOT NULL
                )
                """,
                """
                CREATE TABLE coupons (
                    code TEXT PRIMARY KEY,
                    percent_off INT,
                    amount_off_cents BIGINT,
                    expires_at BIGINT
                )
                """,
                """
                CREATE TABLE mechanics (
                    id BIGINT PRIMARY KEY,
                    name TEXT NOT NULL,
                    skill INT NOT NULL CHECK (skill BETWEEN 1 AND 4),
                    active BOOLEAN NOT NULL DEFAULT TRUE,
                    -- The quote holding the mechanic; NULL when free. The busy flag is this column.
                    quote_id BIGINT,
                    -- Milliseconds since 1970 when the mechanic became free; NULL when busy.
                    free_since BIGINT,
                    CHECK ((quote_id IS NULL) = (free_since IS NOT NULL))
                )
                """,
                // A quote holds at most one mechanic.
                "CREATE UNIQUE INDEX mechanics_by_quote ON mechanics(quote_id) WHERE quote_id IS NOT NULL",
                // The dispatch pick: least skill first, then longest free, then lowest id.
                "CREATE INDEX mechanics_free ON mechanics(skill, free_since, id) WHERE quote_id IS NULL AND active",
                """
                CREATE TABLE quotes (
                    id BIGINT PRIMARY KEY,
                    state TEXT NOT NULL,
                    idempotency_key TEXT UNIQUE,
                    mechanic_id BIGINT,
                    price_cents BIGINT,
                    currency TEXT NOT NULL,
                    submitted_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    -- The whole quote, in QuoteCodec's versioned binary form.
                    data BYTEA NOT NULL,
                    -- Its history, in HistoryCodec's form.
                    history BYTEA NOT NULL,
                    -- The wait-list: the seq of the event that put the quote in line, the skill its
                    -- work needs, the one mechanic it waits for.
                    wait_seq BIGINT,
                    wait_skill INT,
                    wait_mechanic BIGINT
                )
                """,
                "CREATE INDEX quotes_by_state ON quotes(state, id)",
                "CREATE INDEX quotes_waiting ON quotes(wait_seq) WHERE wait_seq IS NOT NULL",
                """
                CREATE TABLE events (
                    seq BIGINT PRIMARY KEY,
                    at BIGINT NOT NULL,
                    type TEXT NOT NULL,
                    quote_id BIGINT NOT NULL,
                    mechanic_id BIGINT,
                    from_state TEXT,
                    to_state TEXT,
                    data BYTEA NOT NULL,
                    actor TEXT
                )
                """,
                // One row: the last event seq and quote id handed out. Every write transaction
                // locks it first, so numbers follow commit order with no gap.
                """
                CREATE TABLE counters (
                    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
                    last_seq BIGINT NOT NULL,
                    last_quote_id BIGINT NOT NULL
                )
                """,
                "INSERT INTO counters (one, last_seq, last_quote_id) VALUES (TRUE, 0, 0)",
            ]
        ),
        (
            // Quote ids leave the counters row, which a transaction now locks only at its end
            // (for its block of event numbers): they come from a sequence, a block at a time.
            "v2: quote ids from a sequence",
            [
                "CREATE SEQUENCE quote_ids INCREMENT BY \(unescaped: String(QuoteIDBlocks.blockSize)) MINVALUE 1",
                "SELECT setval('quote_ids', (SELECT last_quote_id FROM counters) + 1, false)",
                "ALTER TABLE counters DROP COLUMN last_quote_id",
            ]
        ),
        (
            // Which catalog the daemons sharing the database price and dispatch with.
            "v3: the catalog in force",
            [
                """
                CREATE TABLE catalog_version (
                    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
                    fingerprint TEXT NOT NULL,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                    applied_by TEXT NOT NULL
                )
                """
            ]
        ),
        (
            // A customer's quotes, found by email address or name prefix (`CustomerSearch`),
            // in the search form `StoredCustomer` gives; compared byte by byte ("C"), so that
            // a name prefix is a range of its index. Quotes stored before are filled in by
            // `fillCustomers` in the same transaction.
            "v4: quotes by customer",
            [
                "ALTER TABLE quotes ADD COLUMN customer_email TEXT COLLATE \"C\"",
                "ALTER TABLE quotes ADD COLUMN customer_name TEXT COLLATE \"C\"",
                "CREATE INDEX quotes_by_customer_email ON quotes(customer_email, id)",
                "CREATE INDEX quotes_by_customer_name ON quotes(customer_name, id)",
            ]
        ),
        (
            // Who takes new bookings: a mechanic off duty keeps their claim but is never picked.
            "v5: duty",
            ["ALTER TABLE mechanics ADD COLUMN on_duty BOOLEAN NOT NULL DEFAULT TRUE"]
        ),
        (
            // The catalog is the database's: its number, changed by each change, and its
            // currency (0 for a catalog synced before: seeded again at start); services and
            // coupons keep the order they were given in.
            "v6: catalog version",
            [
                "ALTER TABLE catalog_version ADD COLUMN version BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE catalog_version ADD COLUMN currency TEXT",
                "ALTER TABLE services ADD COLUMN position INT NOT NULL DEFAULT 0",
                "ALTER TABLE coupons ADD COLUMN position INT NOT NULL DEFAULT 0",
            ]
        ),
        (
            // No statement: a mark that a new quote's quote.submitted is stored without its
            // quote from now on (`StoredEventRow`), which a quoted before it cannot read. One
            // that finds this mark refuses the database.
            "v7: a new quote's first event without its quote", []
        ),
        (
            // No statement either: from now on a new quote's quote.submitted has no row at all,
            // its priced row stands for it (`StoredEventRow`); a quoted before this would read
            // a gap in the log.
            "v8: a new quote's first two events in one row", []
        ),
        (
            // No rows: its lock, whose modes let the transactions that only serve the
            // wait-list run together, and one that may put quotes in it run alone
            // (`PostgresTransaction.lockWaitList(mayPutInLine:)`).
            "v9: the wait-list's lock", ["CREATE TABLE wait_list_lock ()"]
        ),
        (
            // Idempotency keys and states compared byte by byte ("C"), as the customer columns
            // are: every new quote's row goes into both indexes, and the database's locale
            // (`C.UTF-8`, `en_US.UTF-8`...) would compare each pair through `strcoll`. Their
            // indexes are rebuilt; the rows are not rewritten. The change drops the columns'
            // statistics, which the planner needs: they are gathered again.
            "v10: keys and states in byte order",
            [
                "ALTER TABLE quotes ALTER COLUMN idempotency_key TYPE TEXT COLLATE \"C\"",
                "ALTER TABLE quotes ALTER COLUMN state TYPE TEXT COLLATE \"C\"",
                "ANALYZE quotes (idempotency_key, state)",
            ]
        ),
    ]

    /// Applies the migrations not applied yet, in one transaction under an advisory lock: of
    /// several daemons starting at once, one migrates and the others wait for it, then find
    /// nothing left to do. A statement that waits 5 s for a lock another session holds fails
    /// the migration rather than stall every query queued behind it.
    func migrate() async throws(StoreError) {
        let log = logger
        try await withConnection(unlimited: true) { connection throws(StoreError) in
            try await Self.run(connection, "BEGIN")
            do throws(StoreError) {
                // An arbitrary constant: quoted's schema lock.
                try await Self.run(connection, "SELECT pg_advisory_xact_lock(7305173021)")
                // A migration's DDL waits for the locks of every open transaction on its table
                // (an operator's forgotten session, say), and while it waits, everyone else's
                // queries on that table queue behind it: the whole fleet would stall. It gives up
                // instead after 5 s, and start-up fails (to be tried again) naming the lock.
                try await Self.run(connection, "SET LOCAL lock_timeout = '5s'")
                try await Self.run(
                    connection,
                    "CREATE TABLE IF NOT EXISTS quoted_migrations (id TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
                var applied: Set<String> = []
                do {
                    for try await id in try await connection.query("SELECT id FROM quoted_migrations", logger: log)
                        .decode(String.self)
                    {
                        applied.insert(id)
                    }
                } catch {
                    throw Self.storeError(error)
                }
                // A database a newer quoted migrated may hold what this one cannot read.
                let unknown = applied.subtracting(Self.migrations.map(\.id))
                guard unknown.isEmpty else {
                    throw StoreError(
                        .migration,
                        "the database was migrated by a newer quoted (\(unknown.sorted().joined(separator: ", "))); this version cannot use it: run the newer one"
                    )
                }
                let pending = Self.migrations.filter { !applied.contains($0.id) }
                if !pending.isEmpty {
                    log.notice("migrating store", metadata: ["migrations": "\(pending.map(\.id))"])
                }
                for migration in pending {
                    do throws(StoreError) {
                        for statement in migration.sql { try await Self.run(connection, statement) }
                        if migration.id.hasPrefix("v4:") { try await self.fillCustomers(connection) }
                        try await Self.run(connection, "INSERT INTO quoted_migrations (id) VALUES (\(migration.id))")
                    } catch {
                        let lock =
                            error.message.contains("lock timeout")
                            ? "; another session holds a lock on its table (pg_locks, pg_stat_activity): once it ends, quoted migrates at its next start"
                            : ""
                        throw StoreError(error.code, "\(migration.id): \(error.message)\(lock)")
                    }
                }
                try await Self.run(connection, "COMMIT")
            } catch {
                await Self.rollback(connection, after: error)
                throw StoreError(.migration, "cannot migrate: \(error.message)")
            }
        }
    }

    /// Fills in the customer columns of quotes stored before they existed, from each quote's
    /// record, a page at a time.
    private func fillCustomers(_ connection: PostgresConnection) async throws(StoreError) {
        var after: Int64 = 0
        while true {
            var page: [(Int64, Data)] = []
            do {
                let rows = try await connection.query(
                    "SELECT id, data FROM quotes WHERE id > \(after) ORDER BY id LIMIT 1000", logger: logger)
                for try await row in rows.decode((Int64, Data).self) { page.append(row) }
            } catch {
                throw Self.storeError(error)
            }
            guard let last = page.last else { return }
            var ids: [Int64] = []
            var emails: [String] = []
            var names: [String] = []
            for (id, data) in page {
                let quote = try PostgresTransaction.quote(data)
                ids.append(id)
                emails.append(StoredCustomer.email(of: quote))
                names.append(StoredCustomer.name(of: quote))
            }
            // One statement per page.
            try await Self.run(
                connection,
                """
                UPDATE quotes SET customer_email = v.email, customer_name = v.name
                FROM unnest(\(ids)::bigint[], \(emails)::text[], \(names)::text[]) AS v(id, email, name)
                WHERE quotes.id = v.id
                """)
            after = last.0
        }
    }
}
