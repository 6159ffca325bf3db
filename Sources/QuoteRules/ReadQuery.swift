public import QuoteCore

/// A read-only query.
public enum ReadQuery: Sendable, Hashable {
    case get(QuoteID)
    /// Quotes by increasing id, of one state, of the customers a search finds, or all.
    case list(status: QuoteStatus?, customer: CustomerSearch?, after: QuoteID?, limit: Int)
    case mechanics(freeOnly: Bool, skill: Skill?)
    case services
    case stats
    case events(since: Int64, limit: Int)
    case ping
    /// The wait-list in line order.
    case waiting(limit: Int)
    /// The catalog in force, the store's, with its version.
    case catalog

    /// Whether answering reads many rows: a page bounded by the reply budget, or `stats`,
    /// which counts the whole store. A batch holds a bounded number of these.
    public var readsManyRows: Bool {
        switch self {
        case .list, .mechanics, .services, .events, .waiting, .stats, .catalog: true
        case .get, .ping: false
        }
    }
}
