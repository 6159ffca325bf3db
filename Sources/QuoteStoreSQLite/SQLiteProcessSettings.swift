internal import CSQLite

/// SQLite's settings that are the process's, not a connection's, applied once before the
/// first connection opens.
enum SQLiteProcessSettings {
    /// Applies the settings; a no-op after the first call, or when SQLite was initialized
    /// already (by another library of the process), which leaves its defaults.
    ///
    /// SQLite's memory statistics go off: with them on, each of the ~30 allocations and
    /// frees SQLite makes per stored submission takes and releases a process-wide mutex to
    /// count bytes nothing here reads.
    static func apply() { _ = applied }

    private static let applied: Bool = csqlite_disable_memory_statistics() == 0
}
