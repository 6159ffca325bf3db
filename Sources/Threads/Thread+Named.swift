public import Foundation

#if canImport(Glibc)
    import Glibc
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

    /// Names the calling thread for the kernel: as much of `name` as fits in 15 bytes, whole
    /// characters only.
    public static func nameCurrentThread(_ name: String) {
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= 15 else { break }
            kept.append(scalar)
        }
        #if canImport(Glibc)
            // What `pthread_setname_np` does, which Glibc's module map does not export.
            let file = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard file >= 0 else { return }
            defer { close(file) }
            let text = String(kept)
            _ = text.withCString { write(file, $0, strlen($0)) }
        #endif
    }
}
