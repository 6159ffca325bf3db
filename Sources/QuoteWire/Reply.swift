public import QuoteCore

/// A successful reply of protocol version 1, as a client reads it: one case per kind of
/// answer, each with exactly what that answer carries, where ``WireReply`` (the frame as
/// decoded) has every field of every answer, optional. ``init(_:answering:)`` reads one for
/// the operation it answers.
public enum Reply: Sendable, Hashable {
    /// What a write to one quote did (`submit`, `resolve`, `book`, `complete`, `cancel`,
    /// `reassign`).
    case change(Change)
    /// `get`: the quote, and each state it went through, oldest first.
    case quote(WireQuote, history: [WireReply.HistoryStep])
    /// `list` and `waiting`: a page of quotes. `next` is the `after` that asks for `list`'s
    /// next page, `nil` on the last; `truncated`, the page ended at the daemon's reply budget.
    case quotes([WireQuote], next: Int64?, truncated: Bool)
    /// `mechanics`: the roster, with who is busy, on which quote.
    case mechanics([WireReply.MechanicStatus], truncated: Bool)
    /// `services`: the catalog's services with their prices.
    case services([WireReply.WireService], truncated: Bool)
    /// A change of the roster (`setDuty`, `addMechanic`, `updateMechanic`, `retireMechanic`):
    /// the mechanic as it left them, whether they are on duty (`setDuty` only), and the quote
    /// the change booked, if any.
    case roster(mechanic: WireQuote.WireMechanic, onDuty: Bool?, quote: WireQuote?)
    /// `catalog`: the catalog in force as a catalog file holds it, and its version;
    /// `truncated` when its roster did not fit in one reply (`mechanics` pages through it).
    case catalog(CatalogDocument, version: Int64, truncated: Bool)
    /// `applyCatalog`: the version of the catalog now in force, and the quote a mechanic it
    /// added booked from the line, if any.
    case catalogApplied(version: Int64, quote: WireQuote?)
    /// `events`: a page of the log, and the log's last `seq` when it was read.
    case events([WireEvent], lastSeq: Int64?, truncated: Bool)
    /// `stats`: the store's figures and the daemon's activity.
    case stats(Stats)
    /// `ping`: the log's last `seq` when the store answered, or what the store said when it
    /// failed (the daemon then answers every write with `storage_error`).
    case pong(Result<Int64, StoreDown>)

    /// What a write to one quote did.
    public struct Change: Sendable, Hashable {
        /// The quote as the write left it.
        public var quote: WireQuote
        /// A submission sent again with the same idempotency key: the first one's quote.
        public var replayed: Bool
        /// The quote waits for a mechanic: its place in line, 1 for the next served.
        public var waitPosition: Int?
        /// A submission with `book` whose booking failed (the quote itself was recorded).
        public var bookingError: WireError?
    }

    /// `stats`: the store's state when read, and what the answering daemon did since it
    /// started.
    public struct Stats: Sendable, Hashable {
        /// Quotes by state.
        public var counts: [String: Int]
        /// Active mechanics by availability: `busy`, `free`, `offDuty`.
        public var mechanicCounts: [String: Int]
        /// The longest any quote in line has waited, in milliseconds; `nil` when none waits.
        public var oldestWaitMilliseconds: Int64?
        /// The log's last `seq`.
        public var lastSeq: Int64
        /// What the answering daemon did since it started.
        public var activity: WireReply.Activity?
    }

    /// A store that did not answer a `ping`: the reason it gave.
    public struct StoreDown: Error, Sendable, Hashable {
        /// What the store's failure said.
        public var message: String
    }

    /// `reply` as the answer to `operation`; `nil` for a refusal (``WireReply/error`` says
    /// why), or for a reply without what that operation's answer carries.
    public init?(_ reply: WireReply, answering operation: Operation) {
        guard reply.ok else { return nil }
        switch operation {
        case .submit, .resolve, .book, .complete, .cancel, .reassign:
            guard let quote = reply.quote else { return nil }
            self = .change(
                Change(
                    quote: quote, replayed: reply.replayed ?? false, waitPosition: reply.waitPosition,
                    bookingError: reply.bookingError))
        case .get:
            guard let quote = reply.quote else { return nil }
            self = .quote(quote, history: reply.history ?? [])
        case .list, .waiting:
            self = .quotes(reply.quotes ?? [], next: reply.next, truncated: reply.truncated ?? false)
        case .mechanics:
            self = .mechanics(reply.mechanics ?? [], truncated: reply.truncated ?? false)
        case .services:
            self = .services(reply.services ?? [], truncated: reply.truncated ?? false)
        case .setDuty, .addMechanic, .updateMechanic, .retireMechanic:
            guard let mechanic = reply.mechanic else { return nil }
            self = .roster(mechanic: mechanic, onDuty: reply.onDuty, quote: reply.quote)
        case .catalog:
            guard let catalog = reply.catalog, let version = reply.catalogVersion else { return nil }
            self = .catalog(catalog, version: version, truncated: reply.truncated ?? false)
        case .applyCatalog:
            guard let version = reply.catalogVersion else { return nil }
            self = .catalogApplied(version: version, quote: reply.quote)
        case .events:
            self = .events(reply.events ?? [], lastSeq: reply.lastSeq, truncated: reply.truncated ?? false)
        case .stats:
            guard let counts = reply.counts, let lastSeq = reply.lastSeq else { return nil }
            self = .stats(
                Stats(
                    counts: counts, mechanicCounts: reply.mechanicCounts ?? [:],
                    oldestWaitMilliseconds: reply.oldestWaitMilliseconds, lastSeq: lastSeq, activity: reply.activity))
        case .ping:
            if reply.store == "down" {
                self = .pong(.failure(StoreDown(message: reply.storeError ?? "no answer")))
            } else {
                self = .pong(.success(reply.lastSeq ?? 0))
            }
        }
    }
}
