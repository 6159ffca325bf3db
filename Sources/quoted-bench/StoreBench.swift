import ArgumentParser
import Foundation
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite

/// Durable submissions per second by batch size, and the cost of a pick by roster size.
struct StoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The SQLite store under the rules: durable inserts by batch size, pick cost by roster size.")

    @Option(help: "Batch sizes for durable submissions.") var batches: [Int] = [1, 10, 100, 1_000]
    @Option(help: "Roster sizes for the pick cost.") var rosters: [Int] = [10, 1_000, 100_000]
    @Option(help: "Submissions per batch size.") var submissions = 20_000
    @Option(help: "Bookings per roster size.") var picks = 5_000
    @Option(help: "Where to put the scratch databases.") var directory = NSTemporaryDirectory()

    func run() throws {
        try runBlocking { [self] in try await measure() }
    }

    private func measure() async throws {
        SQLiteQuoteStore.configureProcess()
        let logger = Logger(label: "bench")
        let rules = Rulebook()
        print("# durable submissions (synchronous=FULL, auto-priced, one transaction per batch)")
        print("batch      submissions/s")
        for size in batches {
            let path = scratch("inserts-\(size)")
            defer { remove(path) }
            let store = try SQLiteQuoteStore(path: path, catalog: .standard, logger: logger)
            let count = max(size, submissions / size * size)
            let commands = try Self.submissions(size)
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<(count / size) { _ = try await rules.apply(commands, catalog: .standard, to: store) }
            let elapsed = clock.now - start
            print(String(format: "%-10d %12.0f", size, Double(count) / elapsed.seconds))
        }

        print("\n# pick + claim + book, 500 per transaction, all mechanics free")
        print("mechanics  picks/s      µs/pick")
        for roster in rosters {
            let path = scratch("picks-\(roster)")
            defer { remove(path) }
            let catalog = try Catalog(
                services: Catalog.standard.services,
                mechanics: (1...roster).map {
                    Mechanic(id: MechanicID(Int64($0)), name: "M\($0)", skill: Skill.allCases[$0 % 4])
                })
            let store = try SQLiteQuoteStore(path: path, catalog: catalog, logger: logger)
            var ids: [QuoteID] = []
            for _ in 0..<(picks / 500) {
                ids += try await rules.apply(try Self.submissions(500), catalog: catalog, to: store).compactMap {
                    try $0.get().quote?.id
                }
            }
            let clock = ContinuousClock()
            var picked = 0
            var elapsed = Duration.zero
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let start = clock.now
                picked += try await rules.apply(chunk.map { .book($0, mechanic: nil) }, catalog: catalog, to: store)
                    .filter { if case .success = $0 { true } else { false } }.count
                elapsed += clock.now - start
                _ = try await rules.apply(chunk.map { .complete($0) }, catalog: catalog, to: store)
            }
            print(
                String(
                    format: "%-10d %-12.0f %.1f", roster, Double(picked) / elapsed.seconds,
                    elapsed.seconds * 1e6 / Double(picked)))
        }
    }

    /// `count` checked submissions, as the daemon hands them to the store.
    static func submissions(_ count: Int) throws -> [CheckedCommand] {
        let checked = try CheckedSubmission(submission, in: .standard, at: Date())
        return Array(repeating: .submit(checked, idempotencyKey: nil, book: false), count: count)
    }

    static let submission = Submission(
        customer: .init(name: "Bench Customer", email: "bench@example.com", address: "1 Loop Rd"),
        car: .init(make: "Honda", model: "Civic", year: 2015, trim: "EX"),
        services: ["Oil Change", "Brake Inspection"])

    private func scratch(_ name: String) -> String {
        let path = (directory as NSString).appendingPathComponent("quoted-bench-\(name)-\(getpid()).sqlite")
        remove(path)
        return path
    }

    private func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
