public import Foundation
import GRDB
public import Logging
public import QuoteCore
public import QuoteStore
import QuoteStoreCodec
import Synchronization
import Threads

/// The embedded default store: one SQLite file in WAL mode on GRDB, durable on commit
/// (`synchronous=FULL`), shared safely by threads and by processes on the same host.
///
/// Every write runs on the one writer connection, on its own thread, one transaction at a
/// time (``write(_:)``); the rules run inside it through ``SQLiteTransaction``. Writes take the
/// write lock up front (`BEGIN IMMEDIATE`), so concurrent writers in other processes queue on
/// the busy timeout instead of failing on a lock upgrade. Reads run concurrently with the
/// writer, on GRDB's reader connections.
public final class SQLiteQuoteStore: QuoteStore {
    private let pool: DatabasePool
    /// The database's file.
    let path: String
    /// The synced catalog's currency, recorded with each new quote.
    private let currency: Mutex<Currency>
    /// The thread every write runs on; its transactions run GRDB's writer block right here.
    private let writer = ExecutorThread(name: "quoted-writer")
    /// Runs each transaction's rules on the writer's thread.
    private let inline = InlineExecutor()
    private let retention: EventRetention
    private let clock: @Sendable () -> Date
    private let logger: Logger
    /// Wakes the ``CheckpointService`` as the log grows; `nil` without background checkpoints
    /// (``Configuration/backgroundCheckpointPages``).
    public let checkpointTrigger: CheckpointTrigger?
    /// The files opened, checked after each commit and each health read.
    private let identity: FileIdentity
    /// The writer's recent quotes (``QuoteCache``): taken by each write transaction on the
    /// writer's thread and given back when it ends, so never shared by two at once.
    private let quoteCache: Mutex<QuoteCache>
    /// Quotes by state, once counted (``counts()``); `nil` until then, or after a commit whose
    /// outcome is unknown.
    private let stateCounts = Mutex<StateCounts?>(nil)
    /// How many new quotes the last write transaction held: the room the next one's rows
    /// are begun with (``PendingSubmissions``), so that they do not grow row by row.
    private let lastSubmissions = Atomic<Int>(0)
    /// The room the write transactions bind their text and blobs from, one at a time. Every
    /// statement that points into it is stepped inside a transaction, which holds it; once
    /// the store is gone, they are at most finalized, which never reads their parameters.
    private let parameters = ParameterArena()
    /// The write transactions' prepared statements, kept for the writer's connection.
    private let statements = WriterStatements(count: SQLiteTransaction.Query.allCases.count)

    /// Opens (creating if needed) the store at `path` and migrates it; a store that has no
    /// catalog yet is seeded with `catalog` (version 1). The catalog in force is then the
    /// store's (``catalog()``), whatever `catalog` says.
    public init(
        path: String, catalog: Catalog, configuration: Configuration = .init(), logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(StoreError) {
        var config = GRDB.Configuration()
        config.busyMode = .timeout(TimeInterval(configuration.busyTimeout.milliseconds) / 1_000)
        config.label = "quoted.store"
        // The schema's REFERENCES document how rows point at each other; SQLite is not asked
        // to check them on every write (GRDB turns that on by default). The store's statements
        // only ever write ids they read in the same transaction, and quotes and mechanics are
        // never deleted, while each check is a look-up of the parent row and makes SQLite keep
        // a statement journal (a copy of every page the statement touches) for each write.
        // `integrityViolations()` audits the bookings both ways instead.
        config.foreignKeysEnabled = false
        let synchronous = configuration.synchronousFull ? "FULL" : "NORMAL"
        let checkpointPages = max(0, configuration.writerCheckpointPages)
        let trigger = configuration.backgroundCheckpointPages.map {
            CheckpointTrigger(pages: $0, writerPages: checkpointPages)
        }
        config.prepareDatabase { db in
            // Debian builds SQLite to zero what a write frees; the quote rows keep every
            // customer detail an event holds, so pruned events hide nothing, and the zeroing
            // costs each insert that splits a page.
            try db.execute(sql: "PRAGMA secure_delete = OFF")
            if let trigger {
                // Replaces wal_autocheckpoint, keeping its job (the writer's backstop).
                trigger.install(on: db.sqliteConnection)
            } else {
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(checkpointPages)")
            }
        }
        checkpointTrigger = trigger
        self.path = path
        do {
            pool = try DatabasePool(path: path, configuration: config)
            // Set here, on the one connection that commits, not in `prepareDatabase`: GRDB turns
            // WAL on for the writer after that hook and sets `synchronous = NORMAL` as it does.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
        } catch {
            throw StoreError(.open, "cannot open \(path): \(error)")
        }
        do {
            let migrator = Self.migrator
            let (pending, unknown) = try pool.read { db in
                let done = try migrator.appliedIdentifiers(db)
                return (migrator.migrations.filter { !done.contains($0) }, done.subtracting(migrator.migrations))
            }
            // A file a newer quoted migrated may hold what this one cannot read: refused.
            guard unknown.isEmpty else {
                throw StoreError(
                    .migration,
                    "\(path) was migrated by a newer quoted (\(unknown.sorted().joined(separator: ", "))); this version cannot use it: run the newer one, or restore a backup"
                )
            }
            if !pending.isEmpty {
                // A migration may rewrite every row: say so first.
                logger.notice("migrating store", metadata: ["path": "\(path)", "migrations": "\(pending)"])
            }
            try migrator.migrate(pool)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.migration, "cannot migrate \(path): \(error)")
        }
        identity = FileIdentity(path: path)
        quoteCache = Mutex(QuoteCache(budget: configuration.quoteCacheBytes))
        self.currency = Mutex(catalog.currency)
        self.retention = configuration.retention
        self.clock = clock
        self.logger = logger
        let now = StoredTime.milliseconds(clock())
        let inForce = try writeSync { db in
            if let stored = try Self.loadCatalog(db) { return stored }
            var seeded = catalog
            seeded.version = 1
            try Self.sync(newCatalog: seeded, into: db)
            try Self.record(seeded, into: db, at: now)
            return seeded
        }
        currency.withLock { $0 = inForce.currency }
    }

    deinit {
        // Not waited for: the last reference may go on the writer's own thread.
        writer.stop(wait: false)
    }

    public func syncCatalog(_ catalog: Catalog) async throws(StoreError) {
        let now = StoredTime.milliseconds(clock())
        try await onWriter { [self] () throws(StoreError) in
            try writeSync { db in
                var next = catalog
                next.version = (try Int64.fetchOne(db, sql: "SELECT version FROM catalog_version") ?? 0) + 1
                try Self.sync(newCatalog: next, into: db)
                try Self.record(next, into: db, at: now)
            }
        }
        currency.withLock { $0 = catalog.currency }
    }

    public func catalog() async throws(StoreError) -> Catalog {
        let catalog = try await read { db in
            guard let catalog = try Self.loadCatalog(db) else {
                throw StoreError(.corrupt, "the store holds no catalog")
            }
            return catalog
        }
        currency.withLock { $0 = catalog.currency }
        return catalog
    }

    /// The catalog stored in `db`; `nil` before the first seeding.
    static func loadCatalog(_ db: Database) throws -> Catalog? {
        // Every column read with `decode`, which throws on a value of another type; the
        // subscript would trap on a row changed behind quoted's back.
        guard let row = try Row.fetchOne(db, sql: "SELECT version, currency FROM catalog_version") else { return nil }
        let version: Int64 = try row.decode(atIndex: 0)
        let currency = Currency(try row.decode(String.self, atIndex: 1))
        let services = try Row.fetchAll(
            db, sql: "SELECT name, minimum_skill, price_cents FROM services ORDER BY rowid"
        ).map { row in
            Service(
                name: try row.decode(atIndex: 0), minimumSkill: Skill(rawValue: try row.decode(atIndex: 1)) ?? .master,
                price: Money(cents: try row.decode(atIndex: 2), currency: currency))
        }
        let mechanics = try Row.fetchAll(
            db, sql: "SELECT id, name, skill FROM mechanics WHERE active = 1 ORDER BY id"
        ).map { row in
            Mechanic(
                id: MechanicID(try row.decode(atIndex: 0)), name: try row.decode(atIndex: 1),
                skill: Skill(rawValue: try row.decode(atIndex: 2)) ?? .junior)
        }
        let coupons = try Row.fetchAll(
            db, sql: "SELECT code, percent_off, amount_off_cents, expires_at FROM coupons ORDER BY rowid"
        ).map { row in
            StoredCoupon(
                code: try row.decode(atIndex: 0), percentOff: try row.decode(atIndex: 1),
                amountOffCents: try row.decode(atIndex: 2), expiresAt: try row.decode(atIndex: 3)
            ).coupon(in: currency)
        }
        var catalog = try Catalog(currency: currency, services: services, mechanics: mechanics, coupons: coupons)
        catalog.version = version
        return catalog
    }

    /// Records `catalog`'s version as the one in force.
    static func record(_ catalog: Catalog, into db: Database, at now: Int64) throws {
        try db.execute(
            sql: """
                INSERT INTO catalog_version (one, version, currency, fingerprint, applied_at) VALUES (1, ?, ?, ?, ?)
                ON CONFLICT (one) DO UPDATE SET version = excluded.version, currency = excluded.currency,
                    fingerprint = excluded.fingerprint, applied_at = excluded.applied_at
                """, arguments: [catalog.version, catalog.currency.code, catalog.fingerprint, now])
    }

    static func sync(newCatalog: Catalog, into db: Database) throws {
        try db.execute(sql: "DELETE FROM services")
        for service in newCatalog.services {
            try db.execute(
                sql: "INSERT INTO services (name, minimum_skill, price_cents, currency) VALUES (?, ?, ?, ?)",
                arguments: [
                    service.name, service.minimumSkill.rawValue, service.price.cents, service.price.currency.code,
                ])
        }
        try db.execute(sql: "DELETE FROM coupons")
        for coupon in newCatalog.coupons.map(StoredCoupon.init) {
            try db.execute(
                sql: "INSERT INTO coupons (code, percent_off, amount_off_cents, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [coupon.code, coupon.percentOff, coupon.amountOffCents, coupon.expiresAt])
        }
        try db.execute(sql: "UPDATE mechanics SET active = 0")
        // One prepared statement for the whole roster, not one per mechanic: a roster may
        // hold 100,000.
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO mechanics (id, name, skill, active, quote_id, free_since) VALUES (?, ?, ?, 1, NULL, 0)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, skill = excluded.skill, active = 1
                """)
        for mechanic in newCatalog.mechanics {
            try upsert.execute(arguments: [mechanic.id.rawValue, mechanic.name, mechanic.skill.rawValue])
        }
    }

    // MARK: Writing

    public var executor: (any TaskExecutor)? { writer }

    public func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T> {
        let now = clock()
        let currency = currency.withLock { $0 }
        // Numbered for good as they are appended: one writer.
        return Committed(
            try await onWriter { [self] () throws(StoreError) in
                try identity.checkKnown()
                var applied = currency
                var cache = takeCache()
                var stateChanges: [Int] = []
                var heldKeyTaken = false
                func attempt(holdingKeyed: Bool) throws(StoreError) -> T {
                    try writeSync { db throws(StoreError) in
                        let transaction = SQLiteTransaction(
                            db: db, now: now, currency: currency, cache: cache, parameters: parameters,
                            statements: statements, holdsKeyed: holdingKeyed,
                            expectedSubmissions: lastSubmissions.load(ordering: .relaxed))
                        cache = QuoteCache(budget: 0)
                        defer {
                            lastSubmissions.store(transaction.submissionsHeld, ordering: .relaxed)
                            applied = transaction.currency
                            stateChanges = transaction.stateChanges
                            heldKeyTaken = transaction.heldKeyTaken
                            swap(&cache, &transaction.cache)
                        }
                        let value = try inline.run { () throws(StoreError) in try await body(transaction) }
                        try transaction.writePending()
                        return value
                    }
                }
                let value: T
                do throws(StoreError) {
                    do throws(StoreError) {
                        value = try attempt(holdingKeyed: true)
                    } catch  where heldKeyTaken && !error.outcomeUnknown {
                        // A request sent again under its key: rolled back whole, and run
                        // again asking the index at each keyed insert (`SQLiteTransaction`).
                        cache.discardTransaction()
                        value = try attempt(holdingKeyed: false)
                    }
                } catch {
                    cache.discardTransaction()
                    quoteCache.withLock { $0 = cache }
                    if error.outcomeUnknown { stateCounts.withLock { $0 = nil } }
                    throw error
                }
                cache.commit()
                quoteCache.withLock { $0 = cache }
                if !stateChanges.isEmpty {
                    stateCounts.withLock { counts in
                        if counts?.apply(stateChanges) == false { counts = nil }
                    }
                }
                if applied != currency { self.currency.withLock { $0 = applied } }
                // Committed, but to the file a restart will open? Not acknowledged otherwise.
                do throws(StoreError) {
                    try identity.check()
                } catch {
                    quoteCache.withLock { $0.clear() }
                    stateCounts.withLock { $0 = nil }
                    throw error
                }
                return value
            })
    }

    /// How many quotes the writer's cache holds now.
    var cachedQuotes: Int { quoteCache.withLock { $0.count } }

    /// The writer's quote cache, for one transaction: the store keeps an empty one meanwhile,
    /// so that the taken one has a single owner and is changed in place.
    private func takeCache() -> QuoteCache {
        quoteCache.withLock { cache in
            let taken = cache
            cache = QuoteCache(budget: cache.budget)
            return taken
        }
    }

    /// `body`, run on the writer's thread: at once for a caller already there, otherwise
    /// after one hop. It may block that thread (GRDB's writer block, the fsync); no other
    /// thread waits on it.
    private func onWriter<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError)
        -> T
    {
        let result: Result<T, StoreError> = await withTaskExecutorPreference(writer) {
            Result { () throws(StoreError) in try body() }
        }
        return try result.get()
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction of `db`, mapping database failures:
    /// what `Database.inTransaction(.immediate)` does, with the `BEGIN` and `COMMIT` prepared
    /// once (GRDB parses each anew, on every batch). A failed body or commit is rolled back,
    /// and the first error is the one thrown: for a failed commit, one of unknown outcome.
    private func transaction<T>(_ db: Database, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        } catch {
            throw Self.storeError(error)
        }
        let value: T
        do {
            value = try body(db)
            // A transaction SQLite rolled back on its own (an I/O error, a full disk) is not
            // committed by what ran after it: refused, as GRDB's transaction block refuses it.
            guard db.isInsideTransaction else {
                throw DatabaseError(resultCode: .SQLITE_ABORT, message: "the transaction was rolled back")
            }
        } catch {
            // SQLite may have rolled back already (`SQLITE_FULL`, `SQLITE_IOERR`, ...): then
            // GRDB's rollback does nothing, and the body's error is still the one reported.
            try? db.rollback()
            throw Self.storeError(error)
        }
        do {
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
            return value
        } catch {
            // A commit that failed as it was written (an I/O error during its fsync) may have
            // reached the log whole, and be there when the file is next opened: unknown. One
            // refused for a lock (`SQLITE_BUSY`) left the transaction open, rolled back here.
            try? db.rollback()
            let failure = Self.storeError(error)
            throw failure.code == .busy ? failure : failure.withUnknownOutcome
        }
    }

    /// Runs `body` in one write transaction from the calling thread.
    private func writeSync<T>(_ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.writeWithoutTransaction { db in try transaction(db, body) }
        } catch {
            throw Self.storeError(error)
        }
    }

    /// `error` as a `StoreError`: a busy lock, an unreadable record or another failure.
    static func storeError(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as DatabaseError where error.resultCode == .SQLITE_BUSY: StoreError(.busy, "\(error)")
        case let error as QuoteCodec.CorruptRecord: StoreError(.corrupt, error.description)
        default: StoreError(.database, "\(error)")
        }
    }

    /// The writer connection's `PRAGMA synchronous` as SQLite names it (`off`, `normal`,
    /// `full`, `extra`): the setting in force where commits happen, which decides whether a
    /// commit is durable when it returns. Read back rather than assumed, because GRDB once
    /// changed it behind the configuration's back.
    public func writerSynchronous() throws(StoreError) -> String {
        let value: Int
        do {
            value = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        } catch {
            throw StoreError(.database, "\(error)")
        }
        let names = ["off", "normal", "full", "extra"]
        return names.indices.contains(value) ? names[value] : "unknown (\(value))"
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw Self.storeError(error)
        }
    }

    // MARK: Reading

    public func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord? {
        try await read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT data, history FROM quotes WHERE id = ?", arguments: [id.rawValue])
            else { return nil }
            let quote = try QuoteCodec.decodeQuote(try row.decode(Data.self, atIndex: 0))
            let history = try HistoryCodec.decode(try row.decode(Data.self, atIndex: 1))
            return QuoteRecord(quote: quote, history: history)
        }
    }

    public func quote(idempotencyKey key: String) async throws(StoreError) -> Quote? {
        try await read { db in
            // Bound as bytes and cast: GRDB binds a `String` as C text, cut at its first NUL,
            // and a key is compared byte for byte, as the writer binds it.
            try Data.fetchOne(
                db, sql: "SELECT data FROM quotes WHERE idempotency_key = CAST(? AS TEXT)",
                arguments: [Data(key.utf8)]
            ).map(QuoteCodec.decodeQuote)
        }
    }

    public func quotes(
        status: QuoteStatus?, customer: CustomerSearch?, afterID: QuoteID?, limit: Int, examining: Int
    ) async throws(StoreError) -> QuotePage {
        try await read { db in
            let after = afterID?.rawValue ?? 0
            let examining = max(1, examining)
            switch customer {
            case nil:
                // Every quote examined is one found: by state through its index, or all by id.
                return try Self.firstByID(db, "quotes", "id > ?", [after], status: status, limit: limit)
            case .email(let email)?:
                // Bound as bytes and cast, compared byte for byte, as the writer binds it.
                return try Self.examine(
                    db, "INDEXED BY quotes_by_customer_email WHERE customer_email = CAST(? AS TEXT)",
                    [Data(email.utf8)], status: status, namePrefix: nil, after: after, limit: limit,
                    examining: examining)
            case .namePrefix(let prefix)?:
                // A range of the name index; the bounds are bytes, compared as text byte by byte.
                let range: StatementArguments = [Data(prefix.utf8), Data(StoredCustomer.upperBound(ofPrefix: prefix))]
                let nameRange = "customer_name >= CAST(? AS TEXT) AND customer_name < CAST(? AS TEXT)"
                // The index gives the matches by name, not by id: they are all read and sorted,
                // so only while there are few in all (`after` cannot narrow the range: counting
                // only those past it would read every match before it).
                let matches =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM (SELECT 1 FROM quotes INDEXED BY quotes_by_customer_name
                                WHERE \(nameRange) LIMIT ?)
                            """, arguments: range + [examining + 1]) ?? 0
                if matches <= examining {
                    return try Self.firstByID(
                        db, "quotes INDEXED BY quotes_by_customer_name", "\(nameRange) AND id > ?", range + [after],
                        status: status, limit: limit)
                }
                // Too many to sort: the quotes in id order (of the state asked, through its
                // index), the next `examining` of them, checked for the name.
                guard let status else {
                    return try Self.examine(
                        db, "NOT INDEXED WHERE 1", [], status: nil, namePrefix: range, after: after, limit: limit,
                        examining: examining)
                }
                return try Self.examine(
                    db, "INDEXED BY quotes_by_state WHERE state = ?", [status.rawValue], status: nil,
                    namePrefix: range, after: after, limit: limit, examining: examining)
            }
        }
    }

    /// The first `limit` quotes by id of `source` (`quotes`, perhaps with the index to use)
    /// that `condition`, with `arguments`, holds for, in `status` when set.
    private static func firstByID(
        _ db: Database, _ source: String, _ condition: String, _ arguments: StatementArguments,
        status: QuoteStatus?, limit: Int
    ) throws -> QuotePage {
        var condition = condition
        var arguments = arguments
        if let status {
            condition += " AND state = ?"
            arguments += [status.rawValue]
        }
        arguments += [limit]
        return QuotePage(
            quotes: try Data.fetchAll(
                db, sql: "SELECT data FROM \(source) WHERE \(condition) ORDER BY id LIMIT ?", arguments: arguments
            ).map(QuoteCodec.decodeQuote))
    }

    /// The quotes among the next `examining` after `after` in id order that `source` (a
    /// `FROM quotes` tail: an index and a condition, with `arguments`) gives, in `status` and of
    /// `namePrefix` (the name range's bounds) when set, at most `limit`; and, when the page is
    /// not full and `examining` were examined, the last examined.
    private static func examine(
        _ db: Database, _ source: String, _ arguments: StatementArguments, status: QuoteStatus?,
        namePrefix: StatementArguments?, after: Int64, limit: Int, examining: Int
    ) throws -> QuotePage {
        let candidates = "SELECT id FROM quotes \(source) AND id > ? ORDER BY id LIMIT ?"
        var filter = ""
        var filterArguments: StatementArguments = []
        if let status {
            filter += " AND q.state = ?"
            filterArguments += [status.rawValue]
        }
        if let namePrefix {
            filter += " AND q.customer_name >= CAST(? AS TEXT) AND q.customer_name < CAST(? AS TEXT)"
            filterArguments += namePrefix
        }
        let scan = arguments + [after, examining]
        let quotes = try Data.fetchAll(
            db,
            sql: """
                WITH c AS (\(candidates))
                SELECT q.data FROM c JOIN quotes q ON q.id = c.id WHERE 1\(filter) ORDER BY c.id LIMIT ?
                """, arguments: scan + filterArguments + [limit]
        ).map(QuoteCodec.decodeQuote)
        guard quotes.count < limit else { return QuotePage(quotes: quotes) }
        let row = try Row.fetchOne(db, sql: "SELECT count(*), max(id) FROM (\(candidates))", arguments: scan)
        guard let row, try row.decode(Int.self, atIndex: 0) == examining else { return QuotePage(quotes: quotes) }
        return QuotePage(quotes: quotes, examinedThrough: QuoteID(try row.decode(Int64.self, atIndex: 1)))
    }

    public func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote] {
        try await read { db in
            try Data.fetchAll(
                db, sql: "SELECT data FROM quotes WHERE wait_seq IS NOT NULL ORDER BY wait_seq LIMIT ?",
                arguments: [limit]
            ).map(QuoteCodec.decodeQuote)
        }
    }

    public func longestWaitingSince() async throws(StoreError) -> Date? {
        // A waiting quote's `updated_at` is when it started waiting: nothing else changes it.
        try await read { db in
            try Int64.fetchOne(db, sql: "SELECT min(updated_at) FROM quotes WHERE wait_seq IS NOT NULL")
                .map(StoredTime.date)
        }
    }

    public func mechanics() async throws(StoreError) -> [MechanicState] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, name, skill, quote_id, free_since, on_duty FROM mechanics WHERE active = 1 ORDER BY id"
            ).map { row in
                MechanicState(
                    mechanic: Mechanic(
                        id: MechanicID(try row.decode(atIndex: 0)), name: try row.decode(atIndex: 1),
                        skill: Skill(rawValue: try row.decode(atIndex: 2)) ?? .junior),
                    quote: (try row.decode(Int64?.self, atIndex: 3)).map(QuoteID.init),
                    freeSince: (try row.decode(Int64?.self, atIndex: 4)).map(StoredTime.date),
                    onDuty: try row.decode(Bool.self, atIndex: 5))
            }
        }
    }

    public func mechanicCounts() async throws(StoreError) -> MechanicCounts {
        try await read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(quote_id), coalesce(sum(quote_id IS NULL AND on_duty = 1), 0),
                        coalesce(sum(on_duty = 0), 0)
                    FROM mechanics WHERE active = 1
                    """)
            return MechanicCounts(
                busy: try row?.decode(atIndex: 0) ?? 0, free: try row?.decode(atIndex: 1) ?? 0,
                offDuty: try row?.decode(atIndex: 2) ?? 0)
        }
    }

    public func counts() async throws(StoreError) -> [QuoteStatus: Int] {
        if let counts = stateCounts.withLock({ $0 }) { return counts.byStatus }
        // Counted once, on the writer: no commit falls between the count and keeping it.
        return try await onWriter { [self] () throws(StoreError) in
            if let counts = stateCounts.withLock({ $0 }) { return counts.byStatus }
            var counts: [QuoteStatus: Int] = [:]
            do {
                try pool.writeWithoutTransaction { db in
                    for row in try Row.fetchAll(db, sql: "SELECT state, count(*) FROM quotes GROUP BY state") {
                        if let status = QuoteStatus(rawValue: try row.decode(atIndex: 0)) {
                            counts[status] = try row.decode(atIndex: 1)
                        }
                    }
                }
            } catch {
                throw Self.storeError(error)
            }
            let kept = StateCounts(counts)
            stateCounts.withLock { $0 = kept }
            return kept.byStatus
        }
    }

    public func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT seq, at, type, quote_id, from_state, data, actor FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [after, StoredEventRow.rowsToRead(forPage: limit)]
            ).map(Self.eventRow)
            return try StoredEventRow.page(rows, after: after, limit: limit)
        }
    }

    public func lastSequence() async throws(StoreError) -> Int64 {
        try identity.check()
        return try await read { db in try Self.lastSequence(db) }
    }

    public func pruneEvents(now: Date, limit: Int) async throws(StoreError) -> Int {
        let retention = retention
        return try await onWriter { [self] () throws(StoreError) in
            try writeSync { db in try Self.prune(db, now: now, retention: retention, limit: limit) }
        }
    }

    private static func prune(_ db: Database, now: Date, retention: EventRetention, limit: Int) throws -> Int {
        let last = try Self.lastSequence(db)
        let cutoff = StoredTime.milliseconds(now) - retention.minimumAge.milliseconds
        let arguments: StatementArguments = [last - Int64(retention.minimumCount), cutoff, limit]
        // The oldest rows, less a last one that is a `quote.submitted` of its own (files from
        // before v10): the priced row after it is read with it, so the two go together.
        let picked = """
            WITH picked AS (SELECT seq, type FROM events WHERE seq <= ?1 AND at < ?2 ORDER BY seq LIMIT ?3)
            SELECT seq FROM picked WHERE \(StoredEventRow.keepsPairSQL)
            """
        // Events, not rows: a new quote's priced row stands for its `quote.submitted` too
        // unless that has a row of its own (`StoredEventRow`).
        let standing =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM events e WHERE e.seq IN (\(picked)) AND \(StoredEventRow.holdsTwoSQL)
                    """, arguments: arguments) ?? 0
        try db.execute(sql: "DELETE FROM events WHERE seq IN (\(picked))", arguments: arguments)
        let pruned = db.changesCount + standing
        // Should the log be emptied, the next event still follows the last one.
        if pruned > 0 { try db.execute(sql: "UPDATE event_floor SET last_seq = ?", arguments: [last]) }
        return pruned
    }

    // MARK: Integrity

    public func integrityViolations() async throws(StoreError) -> [IntegrityViolation] {
        try await read { db in try Self.violations(db) }
    }

    private static func violations(_ db: Database) throws -> [IntegrityViolation] {
        var found: [IntegrityViolation] = []
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT q.id, q.mechanic_id FROM quotes q LEFT JOIN mechanics m ON m.id = q.mechanic_id
                WHERE q.state = 'booked' AND (m.quote_id IS NULL OR m.quote_id != q.id)
                """)
        {
            let quote: Int64 = try row.decode(atIndex: 0)
            let mechanic: Int64? = try row.decode(atIndex: 1)
            found.append(.bookedWithoutMechanic(quote: quote, mechanic: mechanic))
        }
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT m.id, m.quote_id FROM mechanics m LEFT JOIN quotes q ON q.id = m.quote_id
                WHERE m.quote_id IS NOT NULL AND (q.state IS NOT 'booked' OR q.mechanic_id IS NOT m.id)
                """)
        {
            let mechanic: Int64 = try row.decode(atIndex: 0)
            let quote: Int64 = try row.decode(atIndex: 1)
            found.append(.heldWithoutBooking(mechanic: mechanic, quote: quote))
        }
        return found
    }

    // MARK: Conversions

    /// The columns of an event's `row` (seq, at, type, quote_id, from_state, data, actor),
    /// decoded with `try`: a row that breaks the schema (NULL, another type) is a corrupt
    /// record, not a trap.
    static func eventRow(_ row: Row) throws -> StoredEventRow {
        StoredEventRow(
            seq: try row.decode(atIndex: 0), at: try row.decode(atIndex: 1), type: try row.decode(atIndex: 2),
            quote: try row.decode(atIndex: 3), from: try row.decode(String?.self, atIndex: 4),
            data: try row.decode(atIndex: 5), by: try row.decode(atIndex: 6))
    }
}
