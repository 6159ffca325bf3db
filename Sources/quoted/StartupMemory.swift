#if canImport(Glibc)
    import Glibc
#endif

/// What start-up allocated and freed, given back to the system: opening the store reads the
/// whole catalog (its file, its JSON, the roster's rows) into memory that is free once the
/// daemon serves, but that glibc's allocator keeps in its arenas, where it counts as the
/// daemon's resident memory for as long as it runs (35 to 50 MB with 100,000 mechanics).
enum StartupMemory {
    /// Returns the free memory of every arena to the system (`malloc_trim`); a few
    /// milliseconds, once, before the daemon serves. Elsewhere than glibc, nothing.
    static func release() {
        #if canImport(Glibc)
            // Looked up: Swift's Glibc module leaves out `malloc.h`, which declares it.
            typealias Trim = @convention(c) (Int) -> Int32
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }
}
