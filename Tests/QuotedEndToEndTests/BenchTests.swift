import Foundation
import Testing

/// `quoted-bench load --quick`: the load generator still works against the real daemon.
/// Timings are printed, never asserted.
@Suite("The load generator", .timeLimit(.minutes(3)))
struct BenchTests {
    @Test("quoted-bench load --quick runs every workload against a real quoted and finds no double booking")
    func quickRun() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted-bench"))
        process.arguments = ["load", "--quick", "--markdown", "--quoted", Binaries.path("quoted")]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let err = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let stdout = try String(contentsOf: out, encoding: .utf8)
        let stderr = try String(contentsOf: err, encoding: .utf8)
        #expect(process.terminationStatus == 0, "\(stdout)\n\(stderr)")
        // Markdown rows: | point | load | replies/s | ...
        let rows = stdout.split(separator: "\n").map {
            $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        for label in ["zmq echo (baseline)", "submit", "submit open loop", "mixed", "contention"] {
            let row = try #require(rows.first { $0.first == label }, "no \(label) row:\n\(stdout)")
            let rate = try #require(row.count > 2 ? row[2] : nil)
            let value = Double(rate.hasSuffix("k") ? String(rate.dropLast()) : rate) ?? 0
            #expect(value > 0, "\(label) answered nothing: \(row)")
        }
        let contention = try #require(rows.first { $0.first == "contention" })
        #expect(contention.count > 12 && contention[12] != "-", "contention reports cycles/s: \(contention)")
        #expect(stderr.contains("contention: audit of"), "\(stderr)")
        #expect(stderr.contains("bookings: 0 double bookings"), "\(stderr)")
        #expect(!stderr.contains("FAILED"), "\(stderr)")
    }
}
