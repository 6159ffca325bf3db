import ArgumentParser

/// Placeholder until the CLI lands.
@main
struct QuoteCtl: ParsableCommand {
    func run() throws {
        throw ValidationError("quotectl is not built yet")
    }
}
