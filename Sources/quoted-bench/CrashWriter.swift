import ArgumentParser
import Foundation
import Logging
import QuoteCore
import QuoteRules
import QuoteStoreSQLite

/// Writes to a store under load and prints `ack <quote id>` for every command whose
/// transaction has committed, until killed. The crash test kills it with SIGKILL at random
/// points and checks that every acknowledged write survived.
struct CrashWriter: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash-writer", abstract: "Write under load until killed (for the crash test).",
        shouldDisplay: false)

    @Option(help: "The SQLite database file.") var database: String
    @Option(help: "Commands per transaction.") var batch = 20
    @Option(help: "Mechanics in the catalog.") var mechanics = 10
    @Option(help: "A prefix for idempotency keys, unique per run.") var prefix = "crash"

    func run() throws {
        try runBlocking { [self] in try await writeUntilKilled() }
    }

    private func writeUntilKilled() async throws {
        let catalog = try Catalog(
            services: Catalog.standard.services,
            mechanics: (1...mechanics).map {
                Mechanic(id: MechanicID(Int64($0)), name: "Mechanic \($0)", skill: .master)
            })
        SQLiteQuoteStore.configureProcess()
        let store = try SQLiteQuoteStore(path: database, catalog: catalog, logger: Logger(label: "crash-writer"))
        let rules = Rulebook()
        var booked: [QuoteID] = []
        var counter = 0
        while true {
            var commands: [CheckedCommand] = booked.prefix(batch / 2).enumerated().map { index, id in
                index % 2 == 0 ? .complete(id) : .cancel(id, reason: nil)
            }
            booked.removeFirst(min(booked.count, batch / 2))
            while commands.count < batch {
                counter += 1
                let submission = Submission(
                    customer: .init(name: "Crash \(counter)", email: "crash@example.com", address: "Here"),
                    car: .init(make: "Ford", model: "Focus", year: 2010, trim: "ST"), services: ["Oil Change"])
                commands.append(
                    .submit(
                        try CheckedSubmission(submission, in: catalog, at: Date()),
                        idempotencyKey: "\(prefix)-\(counter)",
                        book: true))
            }
            let results = try await rules.apply(commands, catalog: catalog, to: store)
            var acks = ""
            for result in results {
                guard case .success(let outcome) = result, let quote = outcome.quote else { continue }
                acks += "ack \(quote.id) \(quote.status)\n"
                if quote.status == .booked { booked.append(quote.id) }
            }
            FileHandle.standardOutput.write(Data(acks.utf8))
        }
    }
}
