import Foundation
import Testing

/// `quoted-bench load --quick`: the load generator still works against the real daemon.
/// Timings are printed, never asserted.
@Suite("The load generator", .timeLimit(.minutes(3)))
struct BenchTests {
    @Test("quoted-bench load --quick runs every workload against a real quoted and finds no double booking")
    func quickRun() throws {
        let result = try Binaries.run(
            "quoted-bench", ["load", "--quick", "--markdown", "--quoted", Binaries.path("quoted")])
        let stdout = result.stdout
        let stderr = result.stderr
        #expect(result.status == 0, "\(stdout)\n\(stderr)")
        // Markdown rows: | point | load | replies/s | ...
        let rows = stdout.split(separator: "\n").map {
            $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        for label in ["zmq echo (baseline)", "submit", "submit open loop", "mixed", "contention", "contention --wait"] {
            let row = try #require(rows.first { $0.first == label }, "no \(label) row:\n\(stdout)")
            let rate = try #require(row.count > 2 ? row[2] : nil)
            let value = Double(rate.hasSuffix("k") ? String(rate.dropLast()) : rate) ?? 0
            #expect(value > 0, "\(label) answered nothing: \(row)")
        }
        let contention = try #require(rows.first { $0.first == "contention" })
        #expect(contention.count > 12 && contention[12] != "-", "contention reports cycles/s: \(contention)")
        #expect(stderr.contains("contention: audit of"), "\(stderr)")
        let audits = stderr.split(separator: "\n").filter { $0.contains(": audit of") }
        #expect(audits.count == 3, "mixed, contention, contention --wait: \(stderr)")
        #expect(audits.allSatisfy { $0.hasSuffix(": 0 double bookings, 0 fairness violations") }, "\(stderr)")
        // With --wait no booking is refused, and the line is served.
        let waited = try #require(rows.first { $0.first == "contention --wait" })
        #expect(waited.count > 13 && waited[13] == "0.0%", "no refusals with --wait: \(waited)")
        #expect(audits.last?.contains("from the wait-list") == true)
        // Each point says which of quoted's threads it kept busy, by name.
        let threads = stderr.split(separator: "\n").filter {
            $0.contains(": threads (ran, waited for a core, switches/s): ")
        }
        #expect(threads.contains { $0.contains("quoted-writer ") && $0.contains("quoted-io ") }, "\(stderr)")
        #expect(!stderr.contains("FAILED"), "\(stderr)")
    }

    @Test(
        "quoted-bench engine runs the daemon's decode, commit and encode on real submissions and counts every reply and event, whatever their idempotency keys and customers",
        arguments: [["--keys", "ordered"], ["--keys", "time"], ["--keys", "random", "--distinct-customers"]]
    )
    func engineRun(options: [String]) throws {
        let result = try Binaries.run(
            "quoted-bench", ["engine", "--submissions", "512", "--batch", "128"] + options)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // The bench itself refuses a batch without one reply per submission and two events: a
        // key given twice, or a customer refused, would fail it.
        #expect(result.stdout.contains("engine: 512 submissions in batches of 128:"), "\(result.stdout)")
    }

    @Test("quoted-bench engine --cycles books and completes every quote it submitted, none refused")
    func engineCycles() throws {
        let result = try Binaries.run("quoted-bench", ["engine", "--cycles", "256", "--batch", "64"])
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        // The bench exits non-zero when any booking or completion is refused.
        #expect(result.stdout.contains("engine: 256 book + complete cycles in batches of 64:"), "\(result.stdout)")
    }
}
