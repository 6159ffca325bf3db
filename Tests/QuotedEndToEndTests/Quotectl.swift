import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the real `quotectl` binary against a daemon.
enum Quotectl {
    typealias Result = ProcessOutput

    /// The environment that points quotectl at `daemon`.
    static func environment(_ daemon: DaemonProcess) -> [String: String] {
        ["QUOTED_ENDPOINT": daemon.commands, "QUOTED_EVENTS": daemon.events]
    }

    /// Runs `quotectl arguments...` to completion and returns what it printed.
    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "QUOTED_ENDPOINT")
        env.removeValue(forKey: "QUOTED_EVENTS")
        for (key, value) in environment { env[key] = value }
        return try Binaries.run("quotectl", arguments, environment: env, stdin: stdin)
    }
}

extension Binaries {
    /// Runs one of the package's binaries to completion and returns its status and output
    /// (through files, not pipes: nothing can fill up and block the child). One that runs for
    /// two minutes fails the test and is killed.
    static func run(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
    ) throws -> ProcessOutput {
        try run(absolute: path(name), arguments, environment: environment, stdin: stdin)
    }

    /// Runs the program at `executable` to completion, as ``run(_:_:environment:stdin:)`` does.
    static func run(
        absolute executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: String? = nil
    ) throws -> ProcessOutput {
        let name = URL(fileURLWithPath: executable).lastPathComponent
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let result = try process.runToEnd(stdin: stdin)
        #expect(result.exited, "\(name) \(arguments.joined(separator: " ")) ran for two minutes; killed")
        return ProcessOutput(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

/// A `quotectl watch` running in the background; its output is collected line by line and
/// tests wait on conditions over it, never on the clock.
final class Watcher: @unchecked Sendable {
    let process = Process()
    private let stdoutLines = LogLines()
    private let stderrLines = LogLines()
    private let changed = DispatchSemaphore(value: 0)

    init(_ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: Binaries.path("quotectl"))
        process.arguments = ["watch"] + arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = Self.collect(into: stdoutLines, signal: changed)
        process.standardError = Self.collect(into: stderrLines, signal: changed)
        try process.spawn()
    }

    /// Reads `pipe` on a thread of its own until end of file, appending whole lines.
    private static func collect(into lines: LogLines, signal: DispatchSemaphore) -> Pipe {
        let pipe = Pipe.forChild()
        readLines(from: pipe.fileHandleForReading) { parts in
            lines.lines.withLock { $0.append(contentsOf: parts) }
            signal.signal()
        } atEnd: {
            signal.signal()
        }
        return pipe
    }

    var stdout: [String] { stdoutLines.lines.withLock { $0 } }
    var stderr: [String] { stderrLines.lines.withLock { $0 } }

    /// Waits until `condition` holds over the output, or `timeout` passes; returns whether it held.
    @discardableResult
    func wait(timeout: Duration = .seconds(60), until condition: (_ stdout: [String], _ stderr: [String]) -> Bool)
        -> Bool
    {
        let deadline = ContinuousClock.now + timeout
        while !condition(stdout, stderr) {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            let slice = min(remaining, .milliseconds(200)).components
            _ = changed.wait(
                timeout: .now() + .milliseconds(Int(slice.seconds * 1_000 + slice.attoseconds / 1_000_000_000_000_000)))
        }
        return true
    }

    /// Waits until the watcher says it is following (it has asked quoted where the log ends).
    func waitUntilFollowing() throws {
        let following = wait { _, stderr in stderr.contains { $0.contains("quotectl: watching") } }
        try #require(following, "quotectl watch never started following: \(stderr)")
    }

    /// The JSON events printed so far.
    func events() throws -> [[String: Any]] {
        try stdout.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON event: \(line)")
        }
    }

    /// Stops the watcher (SIGTERM) and waits for it; one still running a minute later fails
    /// the test and is killed.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        #expect(process.waitUntilExit(within: .seconds(60)), "quotectl watch outlived SIGTERM: \(stderr.suffix(20))")
    }

    deinit { stop() }
}

/// What a finished child process printed, and how it ended.
struct ProcessOutput {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The standard output as one JSON object.
    func json() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(stdout)")
    }
}
