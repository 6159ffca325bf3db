import Foundation
import GRDBSQLite
import Synchronization

/// Wakes the background checkpointer (``CheckpointService``) whenever the write-ahead log has
/// grown by ``pages`` since the last checkpoint, and keeps the writer's own checkpoint as the
/// backstop should the checkpointer fall behind.
///
/// SQLite tells every commit's log size to the hook ``install(on:)`` sets on the store's
/// connections (`sqlite3_wal_hook`; only the writer commits, so only its hook ever fires); the
/// hook only compares two integers and, at most once per checkpoint, signals a semaphore. So
/// checkpoints follow the write rate (small and frequent
/// under load, none at all while idle) instead of a timer, whose large checkpoints copy
/// megabytes at once and whose fsync of the database file holds up the commits' own fsyncs
/// behind it.
public final class CheckpointTrigger: Sendable {
    /// Log growth, in pages, that wakes the checkpointer.
    public let pages: Int
    /// Log size, in pages, at which the committing writer checkpoints by itself (`Int.max`:
    /// never, like `wal_autocheckpoint = 0`).
    public let writerPages: Int

    private struct State {
        /// Log frames already copied into the database at the last checkpoint.
        var checkpointed = 0
        /// A wake-up is signalled and not yet taken.
        var signalled = false
        var stopped = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// A trigger that wakes the checkpointer every `pages` of log and lets the writer
    /// checkpoint by itself at `writerPages` (0: never).
    public init(pages: Int, writerPages: Int) {
        self.pages = max(1, pages)
        self.writerPages = writerPages > 0 ? writerPages : .max
    }

    /// Called from the hook after each commit with the log's size in frames.
    func logGrew(to frames: Int) {
        let signal = state.withLock { state in
            // A log smaller than what was checkpointed has been restarted from its beginning.
            if frames < state.checkpointed { state.checkpointed = 0 }
            guard !state.signalled, frames - state.checkpointed >= pages else { return false }
            state.signalled = true
            return true
        }
        if signal { wake.signal() }
    }

    /// Blocks the checkpointer until the log has grown enough; `false` once stopped.
    func waitForGrowth() -> Bool {
        wake.wait()
        return state.withLock { state in
            state.signalled = false
            return !state.stopped
        }
    }

    /// Records what a checkpoint copied.
    func checkpointed(frames: Int) {
        state.withLock { $0.checkpointed = frames }
    }

    /// Ends ``waitForGrowth()`` for good.
    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
    }

    /// Sets the hook on a connection: it replaces SQLite's `wal_autocheckpoint`, whose job
    /// (the writer checkpoints past ``writerPages``) it keeps.
    func install(on connection: OpaquePointer?) {
        sqlite3_wal_hook(connection, walHook, Unmanaged.passUnretained(self).toOpaque())
    }
}

/// The `sqlite3_wal_hook` callback; `context` is the store's ``CheckpointTrigger``, which
/// outlives every connection of the store.
private func walHook(
    context: UnsafeMutableRawPointer?, connection: OpaquePointer?, database: UnsafePointer<CChar>?, frames: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    let trigger = Unmanaged<CheckpointTrigger>.fromOpaque(context).takeUnretainedValue()
    trigger.logGrew(to: Int(frames))
    if Int(frames) >= trigger.writerPages {
        // What SQLite's own autocheckpoint does at this point: copy what it can, waiting for no one.
        sqlite3_wal_checkpoint_v2(connection, database, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
    return SQLITE_OK
}
