import ArgumentParser
import QuoteWire

/// What every command on one mechanic of the roster takes: the daemon's options and the
/// mechanic's name.
struct MechanicOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The mechanic's name, as in the catalog.") var name: String

    /// Sends the change `make` gives for this mechanic, and says what it did.
    func change(_ make: (String) -> Request, saying done: String) async throws {
        try await Self.change(make(name), saying: done, global: global)
    }

    /// Sends a change of the roster and says what it did.
    static func change(_ request: Request, saying done: String, global: GlobalOptions) async throws {
        try await global.show(request) { answer, output in
            guard case .roster(let mechanic, _, let quote) = answer else { return }
            output.line("\(mechanic.name) (#\(mechanic.id), \(mechanic.skill)) \(done)")
            if let quote { output.quote(quote, history: nil) }
        }
    }

    /// Takes the mechanic off duty or puts them back, and says what it did, with the quote
    /// booked when one was.
    func setDuty(_ onDuty: Bool) async throws {
        try await global.show(.setDuty(mechanic: name, onDuty: onDuty)) { answer, output in
            guard case .roster(let mechanic, _, let quote) = answer else { return }
            output.line("\(mechanic.name) is \(onDuty ? "on" : "off") duty")
            if let quote { output.quote(quote, history: nil) }
        }
    }
}
