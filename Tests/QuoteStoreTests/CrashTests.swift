import Foundation
import QuoteCore
import QuoteStore
import QuoteStoreSQLite
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Crashes under load")
struct CrashTests {
    /// The built `quoted-bench`, whose `crash-writer` subcommand is the child process.
    static var writer: URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let buildDirectory = ProcessInfo.processInfo.environment["QUOTED_BUILD_DIR"] ?? root.path + "/.build/debug"
        return URL(fileURLWithPath: buildDirectory + "/quoted-bench")
    }

    @Test("a writer killed by SIGKILL at 20 random points loses no acknowledged write", .timeLimit(.minutes(5)))
    func killedWriterLosesNothing() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.writer.path), "build quoted-bench first")
        let directory = TemporaryDirectory()
        var generator = SystemRandomNumberGenerator()
        var acknowledged: [Int64: String] = [:]
        for round in 0..<20 {
            let process = Process()
            process.executableURL = Self.writer
            process.arguments = [
                "crash-writer", "--database", directory.database, "--batch",
                "\(Int.random(in: 1...40, using: &generator))",
                "--prefix", "round\(round)",
            ]
            let output = Pipe.forChild()
            process.standardOutput = output
            try process.spawn()
            // Wait for a random number of acknowledgements, then kill without warning.
            let target = Int.random(in: 1...400, using: &generator)
            var buffer = Data()
            var lines = 0
            while lines < target {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                lines = buffer.reduce(0) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            }
            kill(process.processIdentifier, SIGKILL)
            try #require(process.waitUntilExit(within: .seconds(30)), "the writer ended at SIGKILL")
            #expect(process.terminationReason == .uncaughtSignal)
            // Everything printed before the kill was acknowledged after its commit.
            buffer.append(output.fileHandleForReading.readDataToEndOfFile())
            for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, fields[0] == "ack", let id = Int64(fields[1]) else { continue }
                acknowledged[id] = String(fields[2])
            }

            let store = try SQLiteQuoteStore(
                path: directory.database, catalog: try StoreFixtures.catalog(mechanics: 10, skill: .master),
                logger: StoreFixtures.logger)
            #expect(try await store.integrityViolations().isEmpty, "round \(round)")
            var missing: [Int64] = []
            for id in acknowledged.keys where try await store.quote(QuoteID(id)) == nil { missing.append(id) }
            #expect(missing.isEmpty, "round \(round): acknowledged quotes lost: \(missing.prefix(5))")
        }
        #expect(acknowledged.count > 20)
        let store = try SQLiteQuoteStore(
            path: directory.database, catalog: try StoreFixtures.catalog(mechanics: 10, skill: .master),
            logger: StoreFixtures.logger)
        // An acknowledged state is never undone: the stored quote is in it or later.
        let order: [String: Int] = [
            "submitted": 0, "pending": 1, "ready": 2, "booked": 3, "completed": 4, "cancelled": 4,
        ]
        for (id, status) in acknowledged {
            let stored = try #require(try await store.quote(QuoteID(id))).quote.status.rawValue
            #expect(order[stored]! >= order[status]!, "quote \(id) was acknowledged \(status), stored \(stored)")
        }
        let events = try await store.events(after: 0, limit: 10_000_000)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(doubleBookings(in: events).isEmpty)
    }
}
