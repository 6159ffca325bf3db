public import CoreMetrics
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The process's own figures, under the names every Prometheus client library uses:
/// `process_cpu_seconds_total`, `process_resident_memory_bytes`,
/// `process_virtual_memory_bytes`, `process_open_fds` and `process_start_time_seconds`. Read
/// from `/proc/self` at each ``refresh()`` (each scrape), so they cost nothing in between.
public final class ProcessMetrics: Sendable {
    private let cpu: FloatingPointCounter
    private let resident: Gauge
    private let virtual: Gauge
    private let openFiles: Gauge
    private let started: Gauge
    /// The CPU seconds already counted: the counter only goes up, by what was used since.
    private let counted = Mutex<Double>(0)

    /// Figures made through `factory`.
    public init(factory: any MetricsFactory) {
        cpu = FloatingPointCounter(label: "process_cpu_seconds_total", factory: factory)
        resident = Gauge(label: "process_resident_memory_bytes", factory: factory)
        virtual = Gauge(label: "process_virtual_memory_bytes", factory: factory)
        openFiles = Gauge(label: "process_open_fds", factory: factory)
        started = Gauge(label: "process_start_time_seconds", factory: factory)
        refresh()
    }

    /// Reads `/proc/self` and updates every figure; one it cannot read keeps its last value.
    public func refresh() {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        {
            // After "pid (comm)": state is field 3; utime 14, stime 15, starttime 22, vsize 23.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            if fields.count > 20, let user = Double(fields[11]), let system = Double(fields[12]) {
                let total = (user + system) / ticks
                let delta = counted.withLock { counted in
                    let delta = max(0, total - counted)
                    counted = max(counted, total)
                    return delta
                }
                if delta > 0 { cpu.increment(by: delta) }
                if let startTicks = Double(fields[19]), let boot = Self.bootTime() {
                    started.record(boot + startTicks / ticks)
                }
                if let bytes = Double(fields[20]) { virtual.record(bytes) }
            }
        }
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let fields = statm.split(separator: " ")
            if fields.count > 1, let pages = Double(fields[1]) {
                resident.record(pages * Double(sysconf(Int32(_SC_PAGESIZE))))
            }
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            openFiles.record(descriptors.count)
        }
    }

    /// When the machine booted, in seconds since 1970 (`btime` in `/proc/stat`).
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }
}
