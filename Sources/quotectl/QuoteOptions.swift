import ArgumentParser
import QuoteWire

/// What every command on one quote takes: the daemon's options and the quote's id.
struct QuoteOptions: ParsableArguments {
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64

    /// Sends the request `make` gives for this quote, and shows the quote it returns (with
    /// its receipt with `receipt`).
    func show(_ make: (Int64) -> Request, receipt: Bool = false) async throws {
        try await global.showQuote(make(id), receipt: receipt)
    }
}
