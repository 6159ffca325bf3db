import Foundation
import GRDB
import QuoteCore
import QuoteStore
import QuoteStoreCodec

extension SQLiteQuoteStore {
    /// The versioned schema. Migrations only ever append: a released one is never edited.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: catalog, quotes, history, events") { db in
            try db.execute(
                sql: """
                    CREATE TABLE services (
                        name TEXT PRIMARY KEY COLLATE NOCASE,
                        minimum_skill INTEGER NOT NULL CHECK (minimum_skill BETWEEN 1 AND 4),
                        price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
                        currency TEXT NOT NULL
                    );
                    CREATE TABLE coupons (
                        code TEXT PRIMARY KEY COLLATE NOCASE,
                        percent_off INTEGER,
                        amount_off_cents INTEGER,
                        expires_at INTEGER
                    );
                    CREATE TABLE mechanics (
                        id INTEGER PRIMARY KEY,
                        name TEXT NOT NULL COLLATE NOCASE,
                        skill INTEGER NOT NULL CHECK (skill BETWEEN 1 AND 4),
                        active INTEGER NOT NULL DEFAULT 1,
                        -- The quote holding the mechanic; NULL when free. The busy flag is this column.
                        quote_id INTEGER REFERENCES quotes(id),
                        -- Milliseconds since 1970 when the mechanic became free; NULL when busy.
                        free_since INTEGER,
                        CHECK ((quote_id IS NULL) = (free_since IS NOT NULL))
                    );
                    -- A quote holds at most one mechanic.
                    CREATE UNIQUE INDEX mechanics_by_quote ON mechanics(quote_id) WHERE quote_id IS NOT NULL;
                    -- The dispatch pick: least skill first, then longest free, then lowest id.
                    CREATE INDEX mechanics_free ON mechanics(skill, free_since, id)
                        WHERE quote_id IS NULL AND active = 1;
                    CREATE TABLE quotes (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        state TEXT NOT NULL,
                        idempotency_key TEXT UNIQUE,
                        mechanic_id INTEGER REFERENCES mechanics(id),
                        price_cents INTEGER,
                        currency TEXT NOT NULL,
                        submitted_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        -- The whole quote, in QuoteCodec's versioned binary form.
                        data BLOB NOT NULL
                    );
                    CREATE INDEX quotes_by_state ON quotes(state, id);
                    CREATE TABLE quote_history (
                        quote_id INTEGER NOT NULL REFERENCES quotes(id),
                        seq INTEGER NOT NULL,
                        from_state TEXT,
                        to_state TEXT NOT NULL,
                        at INTEGER NOT NULL,
                        PRIMARY KEY (quote_id, seq)
                    ) WITHOUT ROWID;
                    -- The outbox: appended in the same transaction as the change it describes.
                    -- AUTOINCREMENT: a sequence number is never reused, even after pruning.
                    CREATE TABLE events (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        at INTEGER NOT NULL,
                        type TEXT NOT NULL,
                        quote_id INTEGER NOT NULL,
                        mechanic_id INTEGER,
                        from_state TEXT,
                        to_state TEXT,
                        data BLOB NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v2: history in the quote row") { db in
            try db.execute(sql: "ALTER TABLE quotes ADD COLUMN history BLOB NOT NULL DEFAULT x''")
            try foldHistory(db)
            try db.execute(sql: "DROP TABLE quote_history")
        }
        // Every insert into an AUTOINCREMENT table reads and rewrites its row in
        // `sqlite_sequence`, and an inline UNIQUE indexes the NULL key of every keyless
        // submission. Quote ids are assigned by the transaction from the highest id, and
        // quotes are never deleted, so ids still never repeat.
        migrator.registerMigration("v3: quote ids without AUTOINCREMENT, idempotency keys in a partial index") { db in
            try db.execute(
                sql: """
                    CREATE TABLE quotes_v3 (
                        id INTEGER PRIMARY KEY,
                        state TEXT NOT NULL,
                        idempotency_key TEXT,
                        mechanic_id INTEGER REFERENCES mechanics(id),
                        price_cents INTEGER,
                        currency TEXT NOT NULL,
                        submitted_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        -- The whole quote, in QuoteCodec's versioned binary form.
                        data BLOB NOT NULL,
                        -- Each state it went through, in HistoryCodec's form.
                        history BLOB NOT NULL DEFAULT x''
                    );
                    INSERT INTO quotes_v3 (id, state, idempotency_key, mechanic_id, price_cents, currency,
                        submitted_at, updated_at, data, history)
                    SELECT id, state, idempotency_key, mechanic_id, price_cents, currency,
                        submitted_at, updated_at, data, history
                    FROM quotes ORDER BY id;
                    DROP TABLE quotes;
                    ALTER TABLE quotes_v3 RENAME TO quotes;
                    CREATE INDEX quotes_by_state ON quotes(state, id);
                    CREATE UNIQUE INDEX quotes_by_idempotency_key ON quotes(idempotency_key)
                        WHERE idempotency_key IS NOT NULL;
                    """)
        }
        // Every event insert also read and rewrote `events`' row in `sqlite_sequence`. Sequence
        // numbers are assigned by the transaction: one more than the highest ever handed out,
        // which is the log's highest, or the floor pruning records should it empty the log
        // (``SQLiteQuoteStore/lastSequence(_:)``). So they still never repeat.
        migrator.registerMigration("v4: event sequence numbers without AUTOINCREMENT") { db in
            try db.execute(
                sql: """
                    CREATE TABLE event_floor (last_seq INTEGER NOT NULL);
                    INSERT INTO event_floor (last_seq)
                    SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0);
                    CREATE TABLE events_v4 (
                        seq INTEGER PRIMARY KEY,
                        at INTEGER NOT NULL,
                        type TEXT NOT NULL,
                        quote_id INTEGER NOT NULL,
                        mechanic_id INTEGER,
                        from_state TEXT,
                        to_state TEXT,
                        data BLOB NOT NULL
                    );
                    INSERT INTO events_v4 (seq, at, type, quote_id, mechanic_id, from_state, to_state, data)
                    SELECT seq, at, type, quote_id, mechanic_id, from_state, to_state, data FROM events ORDER BY seq;
                    DROP TABLE events;
                    ALTER TABLE events_v4 RENAME TO events;
                    """)
        }
        // The wait-list is the waiting quotes themselves, in the order of the events that put
        // them in line (`wait_seq`), with what a freed mechanic is matched on: the skill the
        // work needs and the one mechanic named, if any. Columns are added, no row rewritten.
        migrator.registerMigration("v5: the wait-list") { db in
            try db.execute(
                sql: """
                    ALTER TABLE quotes ADD COLUMN wait_seq INTEGER;
                    ALTER TABLE quotes ADD COLUMN wait_skill INTEGER;
                    ALTER TABLE quotes ADD COLUMN wait_mechanic INTEGER;
                    CREATE INDEX quotes_waiting ON quotes(wait_seq) WHERE wait_seq IS NOT NULL;
                    """)
        }
        // Who caused each event (`StoredEvent.by`); who submitted each quote is in its record.
        migrator.registerMigration("v6: the audit trail") { db in
            try db.execute(sql: "ALTER TABLE events ADD COLUMN actor TEXT")
        }
        // A customer's quotes, found by email address or name prefix (`CustomerSearch`), in
        // the search form `StoredCustomer` gives; quotes stored before are filled in here.
        migrator.registerMigration("v7: quotes by customer") { db in
            try db.execute(
                sql: """
                    ALTER TABLE quotes ADD COLUMN customer_email TEXT;
                    ALTER TABLE quotes ADD COLUMN customer_name TEXT;
                    """)
            let update = try db.makeStatement(
                sql: "UPDATE quotes SET customer_email = ?, customer_name = ? WHERE id = ?")
            let rows = try Row.fetchCursor(db, sql: "SELECT id, data FROM quotes")
            while let row = try rows.next() {
                let quote = try QuoteCodec.decodeQuote(try row.decode(Data.self, atIndex: 1))
                try update.execute(
                    arguments: [
                        StoredCustomer.email(of: quote), StoredCustomer.name(of: quote),
                        try row.decode(Int64.self, atIndex: 0),
                    ])
            }
            try db.execute(
                sql: """
                    CREATE INDEX quotes_by_customer_email ON quotes(customer_email, id);
                    CREATE INDEX quotes_by_customer_name ON quotes(customer_name, id);
                    """)
        }
        // Who takes new bookings: a mechanic off duty keeps their claim but is never picked.
        migrator.registerMigration("v8: duty") { db in
            try db.execute(sql: "ALTER TABLE mechanics ADD COLUMN on_duty INTEGER NOT NULL DEFAULT 1")
        }
        // The catalog is the store's: its number, changed by each change. No row until the
        // store is first seeded (`SQLiteQuoteStore.init`).
        migrator.registerMigration("v9: catalog version") { db in
            try db.execute(
                sql: """
                    CREATE TABLE catalog_version (
                        one INTEGER PRIMARY KEY CHECK (one = 1),
                        version INTEGER NOT NULL,
                        currency TEXT NOT NULL,
                        fingerprint TEXT NOT NULL,
                        applied_at INTEGER NOT NULL
                    )
                    """)
        }
        // A new quote's `quote.submitted` has no row of its own from here on: its priced row
        // stands for it (`StoredEventRow`). No table changes; the version tells a quoted from
        // before, which would read a gap in the log, not to open the file.
        migrator.registerMigration("v10: a new quote's first two events in one row") { _ in }
        return migrator
    }

    /// The highest sequence number ever handed out: the log's highest, or the floor pruning
    /// left when it emptied the log (0 for a log never written).
    static func lastSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: lastSequenceSQL)) ?? 0
    }

    /// The query of ``lastSequence(_:)``; every write batch asks it once, prepared once.
    static let lastSequenceSQL =
        "SELECT max(coalesce((SELECT max(seq) FROM events), 0), (SELECT last_seq FROM event_floor))"

    /// Moves every `quote_history` row into its quote's `history` column (``HistoryCodec``),
    /// one quote at a time in sequence order.
    private static func foldHistory(_ db: Database) throws {
        let update = try db.makeStatement(sql: "UPDATE quotes SET history = ? WHERE id = ?")
        var quote: Int64?
        var steps: [StateChange] = []
        func flush() throws {
            guard let quote, !steps.isEmpty else { return }
            try update.execute(arguments: [Data(HistoryCodec.appending(steps, to: Data())), quote])
            steps.removeAll(keepingCapacity: true)
        }
        let rows = try Row.fetchCursor(
            db, sql: "SELECT quote_id, seq, from_state, to_state, at FROM quote_history ORDER BY quote_id, seq")
        while let row = try rows.next() {
            let id: Int64 = try row.decode(atIndex: 0)
            if id != quote {
                try flush()
                quote = id
            }
            let fromName: String? = try row.decode(atIndex: 2)
            let toName: String = try row.decode(atIndex: 3)
            // nil: no from-state (the first step); .some(nil): a name that is no state.
            let from = fromName.map(QuoteStatus.init(rawValue:))
            guard let to = QuoteStatus(rawValue: toName), from != .some(nil) else {
                throw QuoteCodec.CorruptRecord(
                    description: "quote \(id) has a history step \(fromName ?? "-") -> \(toName)")
            }
            steps.append(
                StateChange(
                    from: from ?? nil, to: to, at: StoredTime.date(try row.decode(atIndex: 4)),
                    seq: try row.decode(atIndex: 1)))
        }
        try flush()
    }
}
