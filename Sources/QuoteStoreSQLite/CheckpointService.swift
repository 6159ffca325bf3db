import Foundation
import GRDB
public import Logging
public import ServiceLifecycle
import Threads

/// Keeps the SQLite store's write-ahead log short from a connection and a thread of its own,
/// so that commits never wait for a checkpoint.
///
/// Left to itself, SQLite checkpoints inside the commit that crosses `wal_autocheckpoint`:
/// that commit copies the log's pages into the database file and fsyncs it before it
/// returns, and every request in its batch waits. This service runs a `PASSIVE` checkpoint,
/// which never blocks the writer or readers, each time the store's ``CheckpointTrigger`` says
/// the log has grown by its ``CheckpointTrigger/pages``: small checkpoints, as often as the
/// write rate needs, none while idle. The writer still checkpoints by itself past
/// ``CheckpointTrigger/writerPages`` should this service fall behind. Durability is
/// unchanged: a commit is durable in the log before it is acknowledged, checkpointed or not.
public struct CheckpointService: Service {
    /// The store's file.
    let path: String
    /// The store's trigger (``SQLiteQuoteStore/checkpointTrigger``).
    let trigger: CheckpointTrigger
    let logger: Logger

    public func run() async throws {
        var configuration = GRDB.Configuration()
        configuration.label = "quoted.checkpoint"
        configuration.busyMode = .timeout(5)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        logger.debug("checkpointing in the background", metadata: ["pages": "\(trigger.pages)"])
        // A thread of its own: waiting for the trigger blocks, which the cooperative pool
        // must never do.
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    let thread = Thread(named: "quoted-ckpt") { [self] in
                        Self.yieldToCommits()
                        while trigger.waitForGrowth() {
                            checkpoint(database)
                        }
                        finished.resume()
                    }
                    thread.start()
                }
            } onCancel: {
                trigger.stop()
            }
        } onGracefulShutdown: {
            trigger.stop()
        }
    }

    /// How much lower the checkpointer runs than the daemon's other threads (a nice value).
    public static let niceness: Int32 = 10

    /// Lowers the calling thread's priority by ``niceness`` (to 19 at most): on two busy cores,
    /// a checkpoint then waits for the writer and the I/O thread rather than delaying their
    /// replies. It still runs whenever they leave a core idle, and the writer checkpoints by
    /// itself should it fall behind. On Linux a nice value belongs to a thread, `0` naming the
    /// caller; elsewhere it would be the whole process's, so it is left alone.
    private static func yieldToCommits() {
        #if os(Linux)
            let which = __priority_which_t(PRIO_PROCESS.rawValue)
            // -1 is also a nice value: only `errno` tells a failure.
            errno = 0
            let current = getpriority(which, 0)
            guard errno == 0 else { return }
            _ = setpriority(which, 0, min(19, current + niceness))
        #endif
    }

    /// One `PASSIVE` checkpoint: copies what it can without waiting for anyone.
    private func checkpoint(_ database: DatabaseQueue) {
        do {
            let (logged, copied) = try database.writeWithoutTransaction { db in
                try db.checkpoint(.passive)
            }
            trigger.checkpointed(frames: copied)
            logger.trace("checkpoint", metadata: ["walFrames": "\(logged)", "checkpointed": "\(copied)"])
        } catch {
            logger.warning("background checkpoint failed; the writer will checkpoint instead: \(error)")
        }
    }
}

extension SQLiteQuoteStore {
    /// The service that checkpoints this store's log as its ``checkpointTrigger`` fires;
    /// `nil` without background checkpoints (``Configuration/backgroundCheckpointPages``).
    public func checkpointService(logger: Logger) -> CheckpointService? {
        checkpointTrigger.map { CheckpointService(path: path, trigger: $0, logger: logger) }
    }
}
