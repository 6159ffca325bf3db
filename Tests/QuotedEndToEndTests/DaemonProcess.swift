import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The package's build directory, where `swift build` put the real binaries.
enum Binaries {
    static var directory: String {
        if let override = ProcessInfo.processInfo.environment["QUOTED_BUILD_DIR"] { return override }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.path + "/.build/debug"
    }

    static func path(_ name: String) -> String { directory + "/" + name }
}

/// A real `quoted` started on free loopback ports (`tcp://127.0.0.1:*`), stopped by SIGTERM.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let stateDirectory: String
    private(set) var commands = ""
    private(set) var events = ""
    private let stderrLines = LogLines()
    private let readyLine = DispatchSemaphore(value: 0)

    /// Starts `quoted` and waits for its "quoted ready" log line.
    init(
        stateDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        endpoint: String = "tcp://127.0.0.1:*", eventsEndpoint: String = "tcp://127.0.0.1:*",
        openFilesLimit: Int? = nil
    ) throws {
        self.stateDirectory =
            stateDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("quoted-e2e-\(UUID().uuidString)").path
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted"))
        process.arguments =
            [
                "--endpoint", endpoint, "--events", eventsEndpoint, "--state-dir", self.stateDirectory, "--log-level",
                "info",
            ] + arguments
        if let openFilesLimit {
            // The shell sets the limit (soft and hard), then becomes quoted: the same process.
            process.arguments =
                ["-c", "ulimit -n \(openFilesLimit) && exec \"$0\" \"$@\"", Binaries.path("quoted")]
                + (process.arguments ?? [])
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NOTIFY_SOCKET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe.forChild()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let lines = stderrLines
        let ready = readyLine
        readLines(from: pipe.fileHandleForReading) { parts in
            lines.lines.withLock { all in
                for line in parts {
                    all.append(line)
                    if line.contains("quoted ready") { ready.signal() }
                }
            }
            lines.arrived.signal()
        } atEnd: {
            ready.signal()
        }
        try process.spawn()
        guard readyLine.wait(timeout: .now() + 60) == .success else {
            throw DaemonError("quoted did not become ready: \(log.joined(separator: "\n"))")
        }
        guard let line = log.first(where: { $0.contains("quoted ready") }) else {
            throw DaemonError("quoted exited before it was ready: \(log.joined(separator: "\n"))")
        }
        commands = Self.field("commands", in: line)
        events = Self.field("events", in: line)
    }

    /// Everything the daemon logged so far.
    var log: [String] { stderrLines.lines.withLock { $0 } }

    /// Waits until `condition` holds of the log, woken as lines arrive; `false` after
    /// `timeout` without it.
    func waitForLog(timeout: Duration = .seconds(20), until condition: ([String]) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout.components.seconds * 1_000))
        while !condition(log) {
            guard stderrLines.arrived.wait(timeout: deadline) == .success else { return condition(log) }
        }
        return true
    }

    /// Sends SIGTERM and waits for the exit; returns the exit status. A daemon still running a
    /// minute later fails the test and is killed (SIGKILL): it never hangs the run.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let exited = process.waitUntilExit(within: .seconds(60))
        #expect(exited, "quoted did not exit within a minute of SIGTERM; its log ends: \(log.suffix(20))")
        return process.isRunning ? -1 : process.terminationStatus
    }

    /// How many descriptors the daemon has open, from /proc.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd"))?.count ?? 0
    }

    /// The daemon's resident memory in KiB, from /proc.
    var residentKiB: Int { memory("VmRSS:") }

    /// The most resident memory the daemon has had, in KiB (`VmHWM`).
    var peakResidentKiB: Int { memory("VmHWM:") }

    private func memory(_ field: String) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix(field) } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit(within: .seconds(60))
        }
    }

    private static func field(_ name: String, in line: String) -> String {
        for part in line.split(separator: " ") where part.hasPrefix(name + "=") {
            return String(part.dropFirst(name.count + 1))
        }
        return ""
    }
}

struct DaemonError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The daemon's stderr, line by line, shared with the pipe's reader.
final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
    /// Signalled each time lines arrive, for a reader waiting on what they say.
    let arrived = DispatchSemaphore(value: 0)
}

/// Reads `handle` to end of file on a thread of its own (simpler and sturdier than
/// `readabilityHandler`), handing over whole lines as they arrive.
func readLines(
    from handle: FileHandle, _ lines: @escaping @Sendable ([String]) -> Void, atEnd: @escaping @Sendable () -> Void
) {
    Thread {
        var partial = ""
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            partial += String(decoding: data, as: UTF8.self)
            var parts = partial.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            partial = parts.removeLast()
            lines(parts)
        }
        atEnd()
    }.start()
}

extension DaemonProcess {
    /// Kills the daemon with SIGKILL, as a crash would, and waits for it to be gone.
    func crash() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        #expect(process.waitUntilExit(within: .seconds(60)), "quoted outlived SIGKILL")
    }
}
