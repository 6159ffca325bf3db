import Foundation

/// CPU time the kernel accounts to processes (`/proc/PID/stat`): quoted's own, and that of a
/// database server on the same machine, found by its processes' name.
enum ProcessCPU {
    /// User plus system CPU seconds process `pid` has used so far; `nil` once it is gone.
    static func seconds(of pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name; utime and stime are the 14th and 15th of the line.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Every process named `name` (`/proc/PID/comm`) with its CPU seconds so far: a server's
    /// processes (PostgreSQL's are all `postgres`). None for a server on another host.
    static func named(_ name: String) -> [Int32: Double] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [:] }
        var found: [Int32: Double] = [:]
        for entry in entries {
            guard let pid = Int32(entry),
                let comm = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                comm.trimmingCharacters(in: .newlines) == name,
                let seconds = seconds(of: pid)
            else { continue }
            found[pid] = seconds
        }
        return found
    }

    /// The CPU seconds the processes in `after` used since `before`: one started in between
    /// counts from its start; one that ended in between is not counted.
    static func used(from before: [Int32: Double], to after: [Int32: Double]) -> Double {
        after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    }
}
