import ArgumentParser
import Foundation
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl mechanics`: who can work, and who is busy with what.
struct Mechanics: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List mechanics with their busy state and duty.")

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Only free mechanics.") var free = false
    @Option(help: "Only mechanics of this skill (junior, apprentice, experienced, master).") var skill: String?

    func validate() throws {
        if let skill, Skill(name: skill) == nil {
            throw ValidationError("unknown skill \"\(skill)\"; use junior, apprentice, experienced or master")
        }
    }

    func run() async throws {
        try await global.show(.mechanics(freeOnly: free, skill: skill)) { answer, output in
            guard case .mechanics(let mechanics, _) = answer else { return }
            output.table(
                ["ID", "NAME", "SKILL", "STATUS", "DUTY", "QUOTE", "FREE SINCE"],
                mechanics.map { mechanic in
                    [
                        String(mechanic.id), mechanic.name, mechanic.skill, mechanic.busy ? "busy" : "free",
                        mechanic.onDuty == false ? "off" : "on",
                        mechanic.quoteId.map(String.init) ?? "-",
                        mechanic.freeSince.flatMap { $0.timeIntervalSince1970 > 0 ? Output.time($0) : nil }
                            ?? "never booked",
                    ]
                })
        }
    }
}

/// `quotectl services`: the catalog's services and prices.
struct Services: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the catalog's services and prices.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.show(.services) { answer, output in
            guard case .services(let services, _) = answer else { return }
            output.table(
                ["SERVICE", "MINIMUM SKILL", "PRICE"],
                services.map { [$0.name, $0.minimumSkill, Output.money($0.priceCents)] })
        }
    }
}

/// `quotectl stats`: quotes by state and the event log's position.
struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Count quotes by state.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.show(.stats) { answer, output in
            guard case .stats(let stats) = answer else { return }
            let counts = stats.counts
            var rows = QuoteStatus.allCases.map { [$0.rawValue, String(counts[$0.rawValue] ?? 0)] }
            rows.append(["total", String(counts.values.reduce(0, +))])
            output.table(["STATE", "QUOTES"], rows)
            if let waited = stats.oldestWaitMilliseconds {
                output.line("oldest waiting for \(Output.duration(Double(waited) / 1_000))")
            }
            output.line("last event #\(stats.lastSeq)")
        }
    }
}

/// `quotectl ping`: is quoted up, and how far is its event log.
struct Ping: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that quoted answers and its store is up (exit 69 when either is not).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await global.withQuoted { (quoted, output) throws(QuotedError) in
            let clock = ContinuousClock()
            let start = clock.now
            let reply = try await quoted.checked(.ping)
            let elapsed = clock.now - start
            if output.json { return output.reply(reply) }
            let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
            let roundTrip = "round trip \(micros / 1_000).\(String(micros % 1_000 / 100)) ms"
            guard case .pong(let store) = try reply.answer(to: .ping) else { return }
            switch store {
            case .success(let lastSeq):
                output.line("quoted at \(global.endpoint) is up: last event #\(lastSeq), \(roundTrip)")
            case .failure(let down):
                throw QuotedError(
                    .unavailable,
                    "quoted at \(global.endpoint) answers, but its store is down (\(down.message)):"
                        + " writes are refused with storage_error")
            }
        }
    }
}
