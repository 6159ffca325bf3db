import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real `quoted` started for a benchmark: its own state directory and catalog, free
/// loopback ports, and its CPU time and memory read from `/proc`.
final class BenchDaemon {
    let executable: String
    let stateDirectory: URL
    let catalog: URL
    private(set) var process = Process()
    private(set) var commands = ""
    private(set) var events = ""
    /// The writer's `synchronous` setting from the "store open" log line, of the latest start.
    private(set) var synchronous = ""
    /// From start to the "quoted ready" log line, of the latest start.
    private(set) var startup: Duration = .zero
    private let extraArguments: [String]

    /// Writes a catalog with `mechanics` mechanics (skills in rotation) and starts quoted.
    init(executable: String, mechanics: Int, arguments: [String] = []) throws {
        self.executable = executable
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "quoted-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        catalog = stateDirectory.appendingPathComponent("catalog.json")
        try Self.catalogText(mechanics: mechanics).write(to: catalog, atomically: true, encoding: .utf8)
        extraArguments = arguments
        try start()
    }

    /// Starts (or restarts, on the same state) quoted and waits for it to be ready.
    func start() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments =
            [
                "--endpoint", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*", "--state-dir",
                stateDirectory.path, "--catalog", catalog.path, "--log-level", "notice",
            ] + extraArguments
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let ready = DispatchSemaphore(value: 0)
        let readyLine = Mutex<String?>(nil)
        let storeLine = Mutex<String?>(nil)
        let handle = pipe.fileHandleForReading
        // Keep reading to the end, so quoted never blocks on a full stderr pipe.
        Thread {
            var partial = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                partial += String(decoding: data, as: UTF8.self)
                var lines = partial.split(separator: "\n", omittingEmptySubsequences: false)
                partial = String(lines.removeLast())
                for line in lines {
                    if line.contains("store open") { storeLine.withLock { $0 = String(line) } }
                    if line.contains("quoted ready") {
                        readyLine.withLock { $0 = String(line) }
                        ready.signal()
                    }
                }
            }
            ready.signal()
        }.start()
        let clock = ContinuousClock()
        let started = clock.now
        try process.run()
        guard ready.wait(timeout: .now() + 120) == .success, let line = readyLine.withLock({ $0 }) else {
            throw BenchError("\(executable) did not become ready")
        }
        startup = clock.now - started
        commands = Self.field("commands", in: line)
        events = Self.field("events", in: line)
        synchronous = storeLine.withLock { $0 }.map { Self.field("synchronous", in: $0) } ?? ""
    }

    /// Stops quoted with SIGTERM and waits for it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }

    /// Stops quoted and removes its state.
    func remove() {
        stop()
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    /// quoted's process id, while it runs.
    var processIdentifier: Int32 { process.processIdentifier }

    /// User plus system CPU seconds quoted has used so far.
    var cpuSeconds: Double { ProcessCPU.seconds(of: process.processIdentifier) ?? 0 }

    /// Peak resident memory (VmHWM) in MiB.
    var peakResidentMiB: Double { Double(statusField("VmHWM:")) / 1024 }

    /// Current resident memory (VmRSS) in MiB.
    var residentMiB: Double { Double(statusField("VmRSS:")) / 1024 }

    private func statusField(_ name: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    private static func field(_ name: String, in line: String) -> String {
        for part in line.split(separator: " ") where part.hasPrefix(name + "=") {
            return String(part.dropFirst(name.count + 1))
        }
        return ""
    }

    /// A JSON catalog (YAML decoding of a large roster costs seconds at start-up): a few
    /// services, and `mechanics` mechanics whose skills rotate junior to master.
    static func catalogText(mechanics: Int) -> String {
        let skills = ["junior", "apprentice", "experienced", "master"]
        let roster = (1...max(mechanics, 1)).map {
            #"{"id":\#($0),"name":"Mechanic \#($0)","skill":"\#(skills[$0 % skills.count])"}"#
        }
        return #"{"currency":"USD","services":["#
            + #"{"name":"Brake Inspection","minimumSkill":"junior","price":"15.00"},"#
            + #"{"name":"Oil Change","minimumSkill":"junior","price":"35.00"},"#
            + #"{"name":"Timing Belt Replacement","minimumSkill":"master","price":"250.00"}],"#
            + #""mechanics":["# + roster.joined(separator: ",") + #"],"#
            + #""coupons":[{"code":"WELCOME10","percentOff":10}]}"#
    }
}
