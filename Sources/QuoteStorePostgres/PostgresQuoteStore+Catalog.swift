import Foundation
import Logging
import PostgresNIO
public import QuoteCore
public import QuoteStore
import QuoteStoreCodec
import Synchronization

extension PostgresQuoteStore {
    /// Syncs `catalog` into the database under the catalog lock, so that daemons starting or
    /// reloading at once apply theirs one after the other, and records its fingerprint. When
    /// another daemon applied a different catalog, this one's replaces it, with a warning: the
    /// daemons still on the other price and dispatch differently until reloaded.
    public func syncCatalog(_ catalog: Catalog) async throws(StoreError) {
        // Running daemons lock mechanics' rows as they book: a sync that meets them in a
        // deadlock is rolled back by PostgreSQL, and runs again.
        var attempt = 1
        while true {
            do {
                return try await syncCatalogOnce(catalog)
            } catch  where error.code == .busy && attempt < 5 {
                logger.notice(
                    "catalog sync rolled back by a conflict with another daemon's transaction; again",
                    metadata: ["attempt": "\(attempt)", "error": "\(error.message)"])
                attempt += 1
                try? await Task.sleep(for: .milliseconds(50 * attempt))
            }
        }
    }

    private func syncCatalogOnce(_ catalog: Catalog) async throws(StoreError) {
        let fingerprint = catalog.fingerprint
        let logger = logger
        let previous = try await withConnection { connection throws(StoreError) -> (String, String)? in
            try await Self.run(connection, "BEGIN")
            do throws(StoreError) {
                // An arbitrary constant: quoted's catalog lock.
                try await Self.run(connection, "SELECT pg_advisory_xact_lock(7305173022)")
                let rows = try await Self.rows(
                    connection, "SELECT fingerprint, applied_by || ' at ' || applied_at::text FROM catalog_version")
                let previous = try rows.first.map { row throws(StoreError) in
                    try Self.decode(row, as: (String, String).self)
                }
                try await Self.sync(catalog, on: connection, logger: logger)
                try await Self.run(
                    connection,
                    """
                    INSERT INTO catalog_version (one, fingerprint, applied_by)
                    VALUES (TRUE, \(fingerprint), \(Self.processName))
                    ON CONFLICT (one) DO UPDATE SET fingerprint = excluded.fingerprint, applied_at = now(),
                        applied_by = excluded.applied_by
                    """)
                try await Self.run(connection, "COMMIT")
                return previous
            } catch {
                await Self.rollback(connection, after: error)
                throw error
            }
        }
        currency.withLock { $0 = catalog.currency }
        if let previous, previous.0 != fingerprint {
            logger.warning(
                "this catalog replaces another in the shared database: daemons still on the other one price and dispatch differently until they load this one",
                metadata: ["catalog": "\(fingerprint)", "replaced": "\(previous.0)", "replacedFrom": "\(previous.1)"])
        }
    }

    public func catalogFingerprint() async throws(StoreError) -> String? {
        let rows = try await query("SELECT fingerprint FROM catalog_version")
        return try rows.first.map { row throws(StoreError) in try Self.decode(row, as: String.self) }
    }

    /// Who applied a catalog, for the others' warnings: host and process id.
    private static let processName =
        "\(ProcessInfo.processInfo.hostName) pid \(ProcessInfo.processInfo.processIdentifier)"

    /// Upserts: another daemon's sync may have written the same rows just before.
    private static func sync(_ catalog: Catalog, on connection: PostgresConnection, logger: Logger)
        async throws(StoreError)
    {
        let serviceNames = catalog.services.map(\.name)
        try await run(connection, "DELETE FROM services WHERE NOT (name = ANY(\(serviceNames)))")
        for service in catalog.services {
            try await run(
                connection,
                """
                INSERT INTO services (name, minimum_skill, price_cents, currency)
                VALUES (\(service.name), \(service.minimumSkill.rawValue), \(service.price.cents),
                    \(service.price.currency.code))
                ON CONFLICT (name) DO UPDATE SET minimum_skill = excluded.minimum_skill,
                    price_cents = excluded.price_cents, currency = excluded.currency
                """)
        }
        let codes = catalog.coupons.map(\.code)
        try await run(connection, "DELETE FROM coupons WHERE NOT (code = ANY(\(codes)))")
        for coupon in catalog.coupons.map(StoredCoupon.init) {
            try await run(
                connection,
                """
                INSERT INTO coupons (code, percent_off, amount_off_cents, expires_at)
                VALUES (\(coupon.code), \(coupon.percentOff), \(coupon.amountOffCents), \(coupon.expiresAt))
                ON CONFLICT (code) DO UPDATE SET percent_off = excluded.percent_off,
                    amount_off_cents = excluded.amount_off_cents, expires_at = excluded.expires_at
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
