#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on the monotonic clock: cheap enough to read twice per request, and shared
/// by every thread of the process, so a time taken on one thread compares with another's.
func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
