#if canImport(Glibc)
    import Glibc
#endif

/// The open-files limit: raised to the hard limit at start-up, as servers do, so that a flood
/// of connections meets `maxConnections` (and libzmq's refusals) before the descriptors the
/// store and the watchdog need run out.
enum OpenFiles {
    /// Raises the soft limit to the hard one; returns the limit in force.
    static func raise() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}
