public import QuoteCore
public import QuoteRules

extension CommandOutcome {
    /// The quote a command on a quote left; a test that expects one fails, rather than
    /// trapping, when the command was on a mechanic and left none.
    public var changedQuote: Quote {
        get throws {
            guard let quote else { throw NoQuote() }
            return quote
        }
    }

    /// The failure of a test that expected a command to leave a quote.
    public struct NoQuote: Error, CustomStringConvertible {
        public var description: String { "the command left no quote" }
    }
}
