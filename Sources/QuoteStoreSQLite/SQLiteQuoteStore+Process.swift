internal import CSQLite

extension SQLiteQuoteStore {
    /// Applies SQLite's settings that are the process's, not a connection's: call it once, at
    /// start, before any thread uses SQLite (SQLite does not allow them to change while it is
    /// in use). Without it the store works the same, only slower.
    ///
    /// SQLite's memory statistics go off: with them on, each of the ~30 allocations and frees
    /// SQLite makes per stored submission takes and releases a process-wide mutex to count
    /// bytes nothing here reads. Returns whether SQLite took the setting (`false` once it has
    /// started, which leaves its defaults).
    @discardableResult
    public static func configureProcess() -> Bool {
        csqlite_disable_memory_statistics() == 0
    }
}
