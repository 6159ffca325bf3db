import CMimalloc

/// What start-up allocated and freed, given back to the system: opening the store reads the
/// whole catalog (its file, its JSON, the roster's rows) into memory that is free once the
/// daemon serves, but that the allocator would keep, where it counts as the daemon's resident
/// memory for as long as it runs (35 to 50 MB with 100,000 mechanics).
enum StartupMemory {
    /// Returns the free memory of every thread's heap to the system (`mi_collect`); a few
    /// milliseconds, once, before the daemon serves.
    static func release() {
        mi_collect(true)
    }
}
