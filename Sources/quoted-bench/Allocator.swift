#if canImport(CMimalloc)
    import CMimalloc
#endif

/// The allocator the bench runs on, the daemon's (`CMimalloc` on Linux), named in its output.
enum Allocator {
    /// `mimalloc` and its version, or `the system's`.
    static var name: String {
        #if canImport(CMimalloc)
            "mimalloc \(mi_version())"
        #else
            "the system's"
        #endif
    }
}
