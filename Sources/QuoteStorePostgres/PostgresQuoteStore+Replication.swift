import PostgresNIO
import QuoteStore

extension PostgresQuoteStore {
    /// After a commit: refuses one that the server answered before it was durable
    /// (`synchronous_commit` `off`); when the server requires synchronous replication
    /// (`synchronous_standby_names` set, `synchronous_commit` `on`, `remote_write` or
    /// `remote_apply`), whether a synchronous standby has the commit.
    ///
    /// PostgreSQL reports a commit whose wait for its standby was cancelled (`statement_timeout`,
    /// `pg_cancel_backend`) as a success with only a WARNING, which postgres-nio does not pass on:
    /// the commit is then on the primary alone. So the standby's position is read back, and a
    /// commit it does not reach within a second is of unknown outcome: `storage_error`, never an
    /// acknowledgement. (The role needs `pg_monitor`, or `pg_read_all_stats`, to see those
    /// positions; without it, every write is refused, saying so.)
    static func confirmReplicated(
        _ connection: PostgresConnection, _ requirement: ReplicationRequirement
    ) async throws(StoreError) {
        if requirement.isKnownNotRequired { return }
        let settings = try await rows(
            connection,
            """
            SELECT pg_current_wal_insert_lsn()::text, current_setting('synchronous_commit'),
                current_setting('synchronous_standby_names') <> ''
                    AND current_setting('synchronous_commit') NOT IN ('off', 'local'),
                current_setting('synchronous_standby_names')
            """)
        guard let row = settings.first else { return }
        let (position, level, required, names) = try decode(row, as: (String, String, Bool, String).self)
        // With `off`, the server answers a COMMIT before its record is flushed: a crash then
        // loses what it had said was committed. Checked after every commit, never cached.
        requirement.record(required: required || level == "off")
        if level == "off" {
            throw StoreError(
                .unavailable,
                "PostgreSQL: synchronous_commit is off, so a commit is not durable when the server answers;"
                    + " the outcome is unknown and was not acknowledged (set synchronous_commit to on for quoted's role)"
            )
        }
        guard required else { return }
        // `ANY 2 (a, b, c)` is not met by one standby: as many as the server waits for.
        let needed = Int64(ReplicationRequirement.standbysRequired(by: names))
        let column =
            switch level {
            case "remote_write": "write_lsn"
            case "remote_apply": "replay_lsn"
            default: "flush_lsn"
            }
        let deadline = ContinuousClock.now + .seconds(1)
        while true {
            let rows = try await rows(
                connection,
                """
                SELECT count(*) FILTER (WHERE \(unescaped: column) IS NULL),
                    count(*) FILTER (WHERE \(unescaped: column) >= \(position)::pg_lsn)
                FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')
                """)
            guard let row = rows.first else { return }
            let (hidden, reached) = try decode(row, as: (Int64, Int64).self)
            if reached >= needed { return }
            if hidden > 0 {
                throw StoreError(
                    .unavailable,
                    "PostgreSQL: the commit's replication cannot be confirmed: the role cannot read"
                        + " pg_stat_replication (grant it pg_monitor); the outcome is unknown and was not acknowledged")
            }
            guard ContinuousClock.now < deadline else {
                throw StoreError(
                    .unavailable,
                    "PostgreSQL: \(reached) of the \(needed) synchronous standbys required confirmed the commit (its wait"
                        + " was cancelled, or a standby is down); the outcome is unknown and was not acknowledged")
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
