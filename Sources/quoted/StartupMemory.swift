#if canImport(CMimalloc)
    import CMimalloc
    import Glibc
#endif

/// The process's allocator, mimalloc on Linux (`CMimalloc`), and what start-up leaves in it:
/// opening the store reads the whole catalog (its file, its JSON, the roster's rows) into
/// memory that is free once the daemon serves, but that the allocator may keep, where it
/// counts as the daemon's resident memory (with 100,000 mechanics, 74-80 MiB at rest with
/// ``release()``, 105-106 without).
enum StartupMemory {
    /// Gives free memory back to the system (`mi_collect`): the calling thread's free pages,
    /// those of threads that have ended, and mimalloc's cache of segments. Other threads'
    /// free pages go back as mimalloc decommits them, after a delay, when those threads next
    /// allocate or free. A few milliseconds, once, before the daemon serves.
    static func release() {
        #if canImport(CMimalloc)
            mi_collect(true)
        #endif
    }

    /// Whether `malloc` is mimalloc's, as linking `CMimalloc` makes it (its library comes
    /// before libc in the executable's dependencies): `nil` where quoted is built without it.
    static var mallocIsMimalloc: Bool? {
        #if canImport(CMimalloc)
            guard let probe = malloc(16) else { return false }
            defer { free(probe) }
            return mi_is_in_heap_region(probe)
        #else
            return nil
        #endif
    }
}
