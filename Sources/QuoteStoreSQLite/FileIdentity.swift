import QuoteStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the database file (and its write-ahead log) is still the one the store opened:
/// deleted, replaced by another file or truncated under a running daemon, SQLite would go on
/// writing to the old, unlinked inode, and every acknowledged write would be gone at the next
/// start. Checked after each commit and on each health read (two `stat` calls); once the file
/// is found to be someone else's, the store stays down until restarted, saying why.
final class FileIdentity: Sendable {
    private struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private struct State {
        var database: Identity?
        var log: Identity?
        /// The shared-memory index beside the log: replaced under a running store, readers and
        /// the writer would disagree on what is committed.
        var index: Identity?
        /// The largest size seen: a database file never shrinks under a store that does not
        /// vacuum, so a smaller one was truncated.
        var largest: Int64 = 0
        /// Why the store is down, once it is.
        var failure: String?
    }

    private let path: String
    /// The log's and its index's paths, made once: they are looked at after every commit.
    private let logPath: String
    private let indexPath: String
    private let state: Mutex<State>

    /// Remembers the identity of `path` and `path-wal` as they are now, just opened.
    init(path: String) {
        // Absolute, so that nothing the process does later (a change of directory) moves it.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        self.path =
            realpath(path, &resolved) != nil
            ? String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : path
        logPath = self.path + "-wal"
        indexPath = self.path + "-shm"
        var initial = State()
        // The resolved path, as every check reads it: `lstat` of a symbolic link would be the
        // link's own identity, and the first check would find the file "replaced".
        if let (identity, size) = Self.status(self.path) {
            initial.database = identity
            initial.largest = size
        }
        initial.log = Self.status(logPath)?.0
        state = Mutex(initial)
    }

    /// Throws `unavailable`, naming what happened, when either file is gone or not the one
    /// opened; every call after the first failure throws the same.
    func check() throws(StoreError) {
        let database = Self.status(path)
        let log = Self.status(logPath)
        let index = Self.status(indexPath)
        let failure = state.withLock { state -> String? in
            if let failure = state.failure { return failure }
            var found: String?
            if let expected = state.database {
                if let (identity, size) = database {
                    if identity != expected {
                        found = "\(path) was replaced by another file"
                    } else if size < state.largest {
                        found = "\(path) was truncated (\(size) bytes, was \(state.largest))"
                    } else {
                        state.largest = size
                    }
                } else {
                    found = "\(path) was deleted"
                }
            }
            // SQLite creates the log and its index with the first transaction: each is
            // known from the first time it is seen on.
            if found == nil { found = Self.compare(&state.log, log?.0, logPath) }
            if found == nil { found = Self.compare(&state.index, index?.0, indexPath) }
            state.failure = found.map {
                "\($0) while open: commits there would be lost at the next start; restart quoted (restore the file first)"
            }
            return state.failure
        }
        if let failure { throw StoreError(.unavailable, failure) }
    }

    /// What happened to a companion file (`-wal`, `-shm`) whose identity is `expected` and
    /// now `current`; a file not known yet becomes known.
    private static func compare(_ expected: inout Identity?, _ current: Identity?, _ name: String) -> String? {
        guard let known = expected else {
            expected = current
            return nil
        }
        guard let current else { return "\(name) was deleted" }
        return current == known ? nil : "\(name) was replaced by another file"
    }

    /// Throws what ``check()`` found before, without looking at the files again: a store
    /// known to be down does no more work.
    func checkKnown() throws(StoreError) {
        if let failure = state.withLock({ $0.failure }) { throw StoreError(.unavailable, failure) }
    }

    private static func status(_ path: String) -> (Identity, Int64)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)), Int64(info.st_size))
    }
}
