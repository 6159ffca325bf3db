import ArgumentParser
import KeyCommands

/// `quoted`: the quote-dispatch daemon. `quoted` alone serves; `quoted repair` fixes what the
/// start-up integrity check reported.
@main
struct Quoted: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quoted",
        abstract: "Quote dispatch over ZeroMQ: prices quotes, books mechanics, publishes every change.",
        subcommands: [Serve.self, Repair.self, Keygen.self],
        defaultSubcommand: Serve.self
    )
}
