import Foundation
import Logging
import PostgresNIO
public import QuoteCore
public import QuoteStore
import QuoteStoreCodec
import Synchronization

extension PostgresQuoteStore {
    /// Seeds a database that holds no catalog yet with `catalog` (version 1), under the
    /// catalog lock, so that of daemons starting at once one seeds and the others find it
    /// seeded; returns the catalog in force, the database's.
    func seedCatalog(_ catalog: Catalog) async throws(StoreError) -> Catalog {
        try await changeCatalog { stored in stored == nil ? catalog : nil }
    }

    public func syncCatalog(_ catalog: Catalog) async throws(StoreError) {
        _ = try await changeCatalog { _ in catalog }
    }

    /// Puts in force, as the next version, what `change` makes of the stored catalog (`nil`
    /// before the first), unless it returns `nil`; returns the catalog in force after.
    private func changeCatalog(
        _ change: @escaping @Sendable (Catalog?) -> Catalog?
    ) async throws(StoreError) -> Catalog {
        // Running daemons lock mechanics' rows as they book: a change that meets them in a
        // deadlock is rolled back by PostgreSQL, and runs again.
        var attempt = 1
        while true {
            do {
                let catalog = try await changeCatalogOnce(change)
                advanceCurrency(to: catalog.currency, version: catalog.version)
                return catalog
            } catch  where error.code == .busy && attempt < 5 {
                logger.notice(
                    "catalog change rolled back by a conflict with another daemon's transaction; again",
                    metadata: ["attempt": "\(attempt)", "error": "\(error.message)"])
                attempt += 1
                try? await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    private func changeCatalogOnce(
        _ change: @escaping @Sendable (Catalog?) -> Catalog?
    ) async throws(StoreError) -> Catalog {
        let logger = logger
        return try await withConnection { connection throws(StoreError) -> Catalog in
            try await Self.run(connection, "BEGIN")
            do throws(StoreError) {
                // An arbitrary constant: quoted's catalog lock.
                try await Self.run(connection, "SELECT pg_advisory_xact_lock(7305173022)")
                let stored = try await Self.loadCatalog(on: connection, lock: true)
                guard var next = change(stored) else {
                    try await Self.run(connection, "COMMIT")
                    guard let stored else { throw StoreError(.corrupt, "the database holds no catalog") }
                    return stored
                }
                next.version = (stored?.version ?? 0) + 1
                try await Self.sync(next, on: connection, logger: logger)
                try await Self.record(next, on: connection)
                try await Self.run(connection, "COMMIT")
                return next
            } catch {
                await Self.rollback(connection, after: error)
                throw error
            }
        }
    }

    public func catalog() async throws(StoreError) -> Catalog {
        let catalog = try await withConnection { connection throws(StoreError) -> Catalog in
            guard let catalog = try await Self.loadCatalog(on: connection, lock: false) else {
                throw StoreError(.corrupt, "the database holds no catalog")
            }
            return catalog
        }
        advanceCurrency(to: catalog.currency, version: catalog.version)
        return catalog
    }

    /// The stored catalog; `nil` before the first seeding. With `lock`, its version row is
    /// locked until the transaction ends (every change to the catalog takes it).
    /// Without `lock`, its statements may see different commits: the version is read again
    /// after the rest, and all of it again if another transaction changed the catalog since.
    static func loadCatalog(on connection: PostgresConnection, lock: Bool) async throws(StoreError) -> Catalog? {
        for _ in 0..<5 {
            guard let (catalog, version) = try await loadCatalogOnce(on: connection, lock: lock) else { return nil }
            if lock { return catalog }
            let rows = try await rows(connection, "SELECT version FROM catalog_version")
            if let row = rows.first, try decode(row, as: Int64.self) == version { return catalog }
        }
        throw StoreError(.busy, "the catalog changed while it was read, five times over")
    }

    private static func loadCatalogOnce(
        on connection: PostgresConnection, lock: Bool
    ) async throws(StoreError) -> (Catalog, Int64)? {
        let versions = try await rows(
            connection,
            PostgresQuery(
                unsafeSQL: "SELECT version, coalesce(currency, 'USD') FROM catalog_version"
                    + (lock ? " FOR UPDATE" : "")))
        guard let row = versions.first else { return nil }
        let (version, code) = try decode(row, as: (Int64, String).self)
        guard version > 0 else { return nil }
        let currency = Currency(code)
        var services: [Service] = []
        for row in try await rows(
            connection, "SELECT name, minimum_skill, price_cents FROM services ORDER BY position, name")
        {
            let (name, skill, cents) = try decode(row, as: (String, Int, Int64).self)
            services.append(
                Service(
                    name: name, minimumSkill: Skill(rawValue: skill) ?? .master,
                    price: Money(cents: cents, currency: currency)))
        }
        var mechanics: [Mechanic] = []
        for row in try await rows(connection, "SELECT id, name, skill FROM mechanics WHERE active ORDER BY id") {
            mechanics.append(PostgresTransaction.mechanic(try decode(row, as: (Int64, String, Int).self)))
        }
        var coupons: [Coupon] = []
        for row in try await rows(
            connection, "SELECT code, percent_off, amount_off_cents, expires_at FROM coupons ORDER BY position, code")
        {
            let (code, percent, amount, expires) = try decode(row, as: (String, Int?, Int64?, Int64?).self)
            coupons.append(
                StoredCoupon(code: code, percentOff: percent, amountOffCents: amount, expiresAt: expires).coupon(
                    in: currency))
        }
        do {
            var catalog = try Catalog(currency: currency, services: services, mechanics: mechanics, coupons: coupons)
            catalog.version = version
            return (catalog, version)
        } catch {
            throw StoreError(.corrupt, "the stored catalog is invalid: \(error)")
        }
    }

    /// Records `catalog`'s version as the one in force.
    static func record(_ catalog: Catalog, on connection: PostgresConnection) async throws(StoreError) {
        try await run(
            connection,
            """
            INSERT INTO catalog_version (one, version, currency, fingerprint, applied_by)
            VALUES (TRUE, \(catalog.version), \(catalog.currency.code), \(catalog.fingerprint), \(processName))
            ON CONFLICT (one) DO UPDATE SET version = excluded.version, currency = excluded.currency,
                fingerprint = excluded.fingerprint, applied_at = now(), applied_by = excluded.applied_by
            """)
    }

    /// Who applied a catalog, for the others' warnings: host and process id.
    private static let processName =
        "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier)"

    /// Upserts: another daemon's sync may have written the same rows just before.
    static func sync(_ catalog: Catalog, on connection: PostgresConnection, logger: Logger)
        async throws(StoreError)
    {
        let serviceNames = catalog.services.map(\.name)
        try await run(connection, "DELETE FROM services WHERE NOT (name = ANY(\(serviceNames)))")
        for (position, service) in catalog.services.enumerated() {
            try await run(
                connection,
                """
                INSERT INTO services (name, minimum_skill, price_cents, currency, position)
                VALUES (\(service.name), \(service.minimumSkill.rawValue), \(service.price.cents),
                    \(service.price.currency.code), \(position))
                ON CONFLICT (name) DO UPDATE SET minimum_skill = excluded.minimum_skill,
                    price_cents = excluded.price_cents, currency = excluded.currency, position = excluded.position
                """)
        }
        let codes = catalog.coupons.map(\.code)
        try await run(connection, "DELETE FROM coupons WHERE NOT (code = ANY(\(codes)))")
        for (position, coupon) in catalog.coupons.map(StoredCoupon.init).enumerated() {
            try await run(
                connection,
                """
                INSERT INTO coupons (code, percent_off, amount_off_cents, expires_at, position)
                VALUES (\(coupon.code), \(coupon.percentOff), \(coupon.amountOffCents), \(coupon.expiresAt),
                    \(position))
                ON CONFLICT (code) DO UPDATE SET percent_off = excluded.percent_off,
                    amount_off_cents = excluded.amount_off_cents, expires_at = excluded.expires_at,
                    position = excluded.position
                """)
        }
        let ids = catalog.mechanics.map(\.id.rawValue)
        try await run(connection, "UPDATE mechanics SET active = FALSE WHERE active AND NOT (id = ANY(\(ids)))")
        // The whole roster in one statement: a roster may hold 100,000. Only rows that differ
        // are written (an upsert locks every row it meets): an unchanged roster, as when a
        // daemon restarts, locks none of the rows running daemons book.
        let names = catalog.mechanics.map(\.name)
        let skills = catalog.mechanics.map(\.skill.rawValue)
        try await run(
            connection,
            """
            INSERT INTO mechanics (id, name, skill, active, quote_id, free_since)
            SELECT roster.id, roster.name, roster.skill, TRUE, NULL, 0
            FROM unnest(\(ids)::bigint[], \(names)::text[], \(skills)::int[]) AS roster(id, name, skill)
            LEFT JOIN mechanics current ON current.id = roster.id
            WHERE current.id IS NULL OR current.name <> roster.name OR current.skill <> roster.skill
                OR NOT current.active
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, skill = excluded.skill, active = TRUE
            """)
    }
}
