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
            try await MechanicOptions.change(.addMechanic(name: name, skill: skill), saying: "added", global: global)
        }
    }

    /// `quotectl mechanic update NAME --skill SKILL`.
    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a mechanic's skill; the work in hand stays theirs.")

        @OptionGroup var mechanic: MechanicOptions
        @Option(help: "Their new skill (junior, apprentice, experienced, master).") var skill: String

        func run() async throws {
            try await mechanic.change({ .updateMechanic(mechanic: $0, skill: skill) }, saying: "updated")
        }
    }

    /// `quotectl mechanic retire NAME`.
    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Retire a mechanic: never booked again; their history and booked quote stay theirs.",
            discussion: "Their booked quote can be moved with `quotectl reassign ID`.")

        @OptionGroup var mechanic: MechanicOptions

        func run() async throws {
            try await mechanic.change({ .retireMechanic(mechanic: $0) }, saying: "retired")
        }
    }

    /// `quotectl mechanic off NAME`.
    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Take a mechanic off duty: no new booking; the work in hand stays theirs.",
            discussion: "Their booked quote can be moved with `quotectl reassign ID`.")

        @OptionGroup var mechanic: MechanicOptions

        func run() async throws { try await mechanic.setDuty(false) }
    }

    /// `quotectl mechanic on NAME`.
    struct On: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a mechanic back on duty: they take the first quote in line they can do, at once.")

        @OptionGroup var mechanic: MechanicOptions

        func run() async throws { try await mechanic.setDuty(true) }
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

    @OptionGroup var quote: QuoteOptions
    @Option(help: "The mechanic to move it to, by name.") var mechanic: String?

    func run() async throws {
        try await quote.show { .reassign(quoteId: $0, mechanic: mechanic) }
    }
}
