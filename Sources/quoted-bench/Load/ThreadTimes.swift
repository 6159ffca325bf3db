import Foundation

/// One thread of a process as the kernel accounts for it (`/proc/PID/task/TID`): its name, the
/// time it ran and the time it waited, runnable, for a core (`schedstat`), and its context
/// switches. Where a daemon's time goes, thread by thread: a thread that waits long for a core
/// on every wake-up adds that to every request that passes through it.
struct ThreadTimes {
    let name: String
    /// Seconds on a core.
    let running: Double
    /// Seconds runnable but waiting for a core.
    let waiting: Double
    /// Voluntary and involuntary context switches.
    let switches: Int

    /// Every thread of process `pid` now, by thread id; none if `/proc` cannot say.
    static func of(process pid: Int32) -> [Int: ThreadTimes] {
        let tasks = "/proc/\(pid)/task"
        guard let ids = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return [:] }
        var threads: [Int: ThreadTimes] = [:]
        for id in ids {
            guard let tid = Int(id),
                let name = try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8),
                let schedstat = try? String(contentsOfFile: "\(tasks)/\(id)/schedstat", encoding: .utf8),
                let status = try? String(contentsOfFile: "\(tasks)/\(id)/status", encoding: .utf8)
            else { continue }
            let times = schedstat.split(separator: " ").compactMap {
                Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard times.count >= 2 else { continue }
            let switches = status.split(separator: "\n")
                .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
                .compactMap { Int($0.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") }
                .reduce(0, +)
            threads[tid] = ThreadTimes(
                name: name.trimmingCharacters(in: .newlines), running: times[0] / 1e9, waiting: times[1] / 1e9,
                switches: switches)
        }
        return threads
    }

    /// What each thread did from `before` to `after`, `seconds` apart, busiest first: its name,
    /// the share of a core it ran, the share it waited for one, its switches a second. Threads
    /// that ran less than 1% are left out.
    static func summary(from before: [Int: ThreadTimes], to after: [Int: ThreadTimes], over seconds: Double)
        -> String
    {
        guard seconds > 0 else { return "" }
        let rows = after.compactMap { tid, now -> (ran: Double, text: String)? in
            guard let then = before[tid] else { return nil }
            let ran = (now.running - then.running) / seconds
            guard ran >= 0.01 else { return nil }
            let waited = (now.waiting - then.waiting) / seconds
            let switches = Double(now.switches - then.switches) / seconds
            return (ran, String(format: "%@ %.0f%% %.0f%% %.0f", now.name, ran * 100, waited * 100, switches))
        }
        return rows.sorted { $0.ran > $1.ran }.map(\.text).joined(separator: ", ")
    }
}
