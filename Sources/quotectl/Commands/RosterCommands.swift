import ArgumentParser
import QuoteWire

/// `quotectl mechanic add|update|retire|off|on NAME`: operators change the roster; support
/// takes a mechanic off duty, or puts them back.
struct MechanicCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mechanic", abstract: "Add, change or retire a mechanic; take them off duty or back on.",
        subcommands: [Add.self, Update.self, Retire.self, Off.self, On.self])

    /// `quotectl mechanic add NAME --skill SKILL`.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a mechanic to the roster, on duty: they take the first quote in line they can do.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The new mechanic's name.") var name: String
        @Option(help: "Their skill (junior, apprentice, experienced, master).") var skill: String

        func run() async throws {
            try await MechanicCommand.change(.addMechanic(name: name, skill: skill), saying: "added", global: global)
        }
    }

    /// `quotectl mechanic update NAME --skill SKILL`.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a mechanic's skill; the work in hand stays theirs.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The mechanic's name, as in the catalog.") var name: String
        @Option(help: "Their new skill (junior, apprentice, experienced, master).") var skill: String

        func run() async throws {
            try await MechanicCommand.change(
                .updateMechanic(mechanic: name, skill: skill), saying: "updated", global: global)
        }
    }

    /// `quotectl mechanic retire NAME`.
    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retire a mechanic: never booked again; their history and booked quote stay theirs.",
            discussion: "Their booked quote can be moved with `quotectl reassign ID`.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The mechanic's name, as in the catalog.") var name: String

        func run() async throws {
            try await MechanicCommand.change(.retireMechanic(mechanic: name), saying: "retired", global: global)
        }
    }

    /// Sends a change of the roster and says what it did.
    static func change(_ request: Request, saying done: String, global: GlobalOptions) async throws {
        try await global.show(request) { reply, output in
            if let mechanic = reply.mechanic {
                output.line("\(mechanic.name) (#\(mechanic.id), \(mechanic.skill)) \(done)")
            }
            if let quote = reply.quote { output.quote(quote, history: nil) }
        }
    }

    /// `quotectl mechanic off NAME`.
    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a mechanic off duty: no new booking; the work in hand stays theirs.",
            discussion: "Their booked quote can be moved with `quotectl reassign ID`.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The mechanic's name, as in the catalog.") var name: String

        func run() async throws { try await MechanicCommand.setDuty(name, onDuty: false, global: global) }
    }

    /// `quotectl mechanic on NAME`.
    struct On: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a mechanic back on duty: they take the first quote in line they can do, at once.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The mechanic's name, as in the catalog.") var name: String

        func run() async throws { try await MechanicCommand.setDuty(name, onDuty: true, global: global) }
    }

    /// Sends `setDuty` and says what it did, with the quote booked when one was.
    static func setDuty(_ name: String, onDuty: Bool, global: GlobalOptions) async throws {
        try await global.show(.setDuty(mechanic: name, onDuty: onDuty)) { reply, output in
            output.line("\(reply.mechanic?.name ?? name) is \(onDuty ? "on" : "off") duty")
            if let quote = reply.quote { output.quote(quote, history: nil) }
        }
    }
}

/// `quotectl reassign ID [--mechanic NAME]`: moves a booked quote to another mechanic.
struct Reassign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a booked quote to another mechanic.",
        discussion: """
            Without --mechanic, quoted picks the next free mechanic able to do the work, by the dispatch order; \
            when none is free, the quote goes to the front of the wait-list. The mechanic it leaves is freed \
            and, on duty, takes the first quote in line they can do.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64
    @Option(help: "The mechanic to move it to, by name.") var mechanic: String?

    func run() async throws {
        try await global.showQuote(.reassign(quoteId: id, mechanic: mechanic))
    }
}
