public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Thread {
    /// A thread that runs `body` under `name`: the name `top -H`, `ps -L`, `perf` and
    /// `/proc/PID/task/TID/comm` show, so that an operator can tell the daemon's threads apart.
    /// (Foundation's `name`, set before the thread starts, does not reach the kernel on
    /// Linux.) The kernel keeps the first 15 bytes.
    public convenience init(named name: String, body: @escaping @Sendable () -> Void) {
        self.init {
            Self.nameCurrentThread(name)
            body()
        }
    }

    /// Names the calling thread for the kernel: as many whole characters of `name` as fit in
    /// 15 bytes, control characters (which would break a reader of `comm` by lines) as `_`. An
    /// empty name leaves the thread's name as it was.
    private static func nameCurrentThread(_ name: String) {
        var kept = ""
        var bytes = 0
        for character in name {
            let shown: Character =
                character.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "_" : character
            bytes += shown.utf8.count
            guard bytes <= 15 else { break }
            kept.append(shown)
        }
        guard !kept.isEmpty else { return }
        #if canImport(Glibc)
            // What `pthread_setname_np` does, which Glibc's module map does not export.
            let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard file >= 0 else { return }
            defer { close(file) }
            _ = kept.withCString { write(file, $0, strlen($0)) }
        #elseif canImport(Darwin)
            _ = pthread_setname_np(kept)
        #endif
    }
}
