public import QuoteCore

/// A page of quotes a search found (``QuoteStore/quotes(status:customer:afterID:limit:examining:)``),
/// and, when the search stopped before filling it, where.
public struct QuotePage: Sendable {
    /// The quotes found, by increasing id.
    public var quotes: [Quote]
    /// Set when the search examined as many quotes as it may without filling the page: the
    /// id of the last it examined. The next page starts after it; quotes past it may match.
    public var examinedThrough: QuoteID?

    public init(quotes: [Quote], examinedThrough: QuoteID? = nil) {
        self.quotes = quotes
        self.examinedThrough = examinedThrough
    }

    /// How many quotes a search examines at most, by default: a few milliseconds of a store's
    /// work, whatever it holds.
    public static let defaultExamined = 2_048
}
