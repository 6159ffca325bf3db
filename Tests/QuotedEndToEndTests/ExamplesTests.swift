import Foundation
import Synchronization
import TestSupport
import Testing
import ZeroMQ

/// The Python examples in `examples/python/` (pyzmq), run as an integrator would run them,
/// against a real quoted, with what they print checked.
@Suite("The Python examples", .serialized, .timeLimit(.minutes(3)))
struct ExamplesTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/python")

    @Test("submit_and_book.py submits, books, completes and prints the receipt")
    func submitAndBook() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let run = try Self.run("submit_and_book.py", daemon: daemon)
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "submitted quote 1: ready, $50.00", "\(run.stdout)")
        #expect(lines.contains { $0.hasPrefix("booked quote 1 with ") }, "\(run.stdout)")
        #expect(lines.contains { $0.contains("Oil Change") && $0.hasSuffix("$35.00") }, "\(run.stdout)")
        #expect(lines.last == "completed quote 1: total $50.00", "\(run.stdout)")

        // What it did is what quoted holds.
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let quote = try #require(try client.call(Requests.op("get", ["quoteId": 1])).quote)
        #expect(quote["state"] as? String == "completed")
    }

    @Test(
        "follow_events.py notices the jump in seq, replays the gap with events, and prints every event once, in order")
    func followEventsGapFree() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        // Six events before the follower is even started: it can only have them by replay.
        for index in 0..<3 {
            #expect(try client.call(Requests.submit(name: "Before \(index)"))["ok"] as? Bool == true)
        }
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: Python.executable)
        follower.arguments = [
            Self.directory.appendingPathComponent("follow_events.py").path, "--since", "0", "--count", "12",
        ]
        follower.currentDirectoryURL = Self.directory
        var environment = ProcessInfo.processInfo.environment
        environment["QUOTED_ENDPOINT"] = daemon.commands
        environment["QUOTED_EVENTS"] = daemon.events
        follower.environment = environment
        let out = Pipe.forChild()
        let err = Pipe.forChild()
        follower.standardOutput = out
        follower.standardError = err
        let printedLines = LogLines()
        let noteLines = LogLines()
        let printedAll = DispatchSemaphore(value: 0)
        let notedAll = DispatchSemaphore(value: 0)
        readLines(from: out.fileHandleForReading) { lines in
            printedLines.lines.withLock { $0 += lines }
        } atEnd: {
            printedAll.signal()
        }
        readLines(from: err.fileHandleForReading) { lines in
            noteLines.lines.withLock { $0 += lines }
        } atEnd: {
            notedAll.signal()
        }
        try follower.spawn()
        // Submit until it has its twelve, waiting for it to be done after each: the first live
        // event it gets is past 6, whenever its subscription takes hold.
        var submitted = 0
        repeat {
            #expect(try client.call(Requests.submit(name: "After \(submitted)"))["ok"] as? Bool == true)
            submitted += 1
        } while printedAll.wait(timeout: .now() + .milliseconds(200)) == .timedOut && submitted < 100
        try #require(follower.waitUntilExit(within: .seconds(60)), "the example ended once it had its events")
        #expect(notedAll.wait(timeout: .now() + 60) == .success, "the example's standard error reached its end")
        let printed = printedLines.lines.withLock { $0 }.joined(separator: "\n")
        let notes = noteLines.lines.withLock { $0 }.joined(separator: "\n")
        #expect(follower.terminationStatus == 0, "\(notes)")
        let seqs = printed.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
        #expect(seqs == Array(1...12), "\(printed)")
        #expect(printed.split(separator: "\n").first == "1 quote.submitted quote 1", "\(printed)")
        #expect(notes.contains("gap: seq 1 to"), "the jump was noticed and replayed: \(notes)")
    }

    /// Runs one example with the project's Python, pointed at `daemon`.
    static func run(_ script: String, daemon: DaemonProcess) throws -> ProcessOutput {
        var environment = ProcessInfo.processInfo.environment
        environment["QUOTED_ENDPOINT"] = daemon.commands
        environment["QUOTED_EVENTS"] = daemon.events
        environment["PYTHONPATH"] = directory.path
        return try Binaries.run(
            absolute: Python.executable, [directory.appendingPathComponent(script).path], environment: environment)
    }
}
