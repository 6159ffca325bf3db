import GRDB
public import Logging
public import ServiceLifecycle

/// Keeps the SQLite store's write-ahead log short from a connection of its own, so that
/// commits never wait for a checkpoint.
///
/// Left to itself, SQLite checkpoints inside the commit that crosses `wal_autocheckpoint`:
/// that commit copies the log's pages into the database file and fsyncs it before it
/// returns, and every request in its batch waits (p99 submit -> ack at 2,000/s offered:
/// 5.9-8.0 ms with it, 1.7-3.2 ms without; docs/benchmarks.md). This service runs a
/// `PASSIVE` checkpoint every `interval` instead, which never blocks the writer or readers;
/// pair it with a high ``SQLiteQuoteStore/Configuration/writerCheckpointPages`` so the
/// writer only checkpoints itself if this falls behind. Durability is unchanged: a commit
/// is durable in the log before it is acknowledged, checkpointed or not.
public struct CheckpointService: Service {
    private let path: String
    private let interval: Duration
    private let logger: Logger

    /// Checkpoints the database at `path` (the store's file) every `interval`.
    public init(path: String, interval: Duration, logger: Logger) {
        self.path = path
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        var configuration = GRDB.Configuration()
        configuration.label = "quoted.checkpoint"
        configuration.busyMode = .timeout(5)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        logger.debug("checkpointing in the background", metadata: ["interval": "\(interval)"])
        try? await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                do {
                    let (logged, copied) = try await database.writeWithoutTransaction { db in
                        try db.checkpoint(.passive)
                    }
                    logger.trace("checkpoint", metadata: ["walFrames": "\(logged)", "checkpointed": "\(copied)"])
                } catch {
                    logger.warning("background checkpoint failed; the writer will checkpoint instead: \(error)")
                }
            }
        }
    }
}
