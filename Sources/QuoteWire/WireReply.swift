public import Foundation
public import QuoteCore

/// One reply frame: `{"v":1,"id":...,"ok":true,...}` or `{"v":1,"id":...,"ok":false,"error":{...}}`.
public struct WireReply: Codable, Sendable, Hashable {
    public struct WireService: Codable, Sendable, Hashable {
        public var name: String
        public var minimumSkill: String
        public var priceCents: Int64
        public var price: String
    }

    public struct MechanicStatus: Codable, Sendable, Hashable {
        public var id: Int64
        public var name: String
        public var skill: String
        public var busy: Bool
        public var quoteId: Int64?
        public var freeSince: Date?
        /// Whether they take new bookings.
        public var onDuty: Bool?
    }

    public struct HistoryStep: Codable, Sendable, Hashable {
        public var from: String?
        public var to: String
        public var at: Date
        public var seq: Int64
    }

    /// For `stats`: what the answering daemon did since it started (one daemon's share when
    /// several serve one database). Counters only grow; a reader takes rates and percentiles
    /// from the difference between two replies, as Prometheus does with its counters.
    public struct Activity: Codable, Sendable, Hashable {
        /// When the daemon started.
        public var startedAt: Date
        /// How long it has run, in milliseconds.
        public var uptimeMilliseconds: Int64
        /// Requests answered, by operation (`unknown` when the request named none that exists)
        /// and by outcome: `ok` or the error code.
        public var requests: [String: [String: Int64]]
        /// The upper bounds of the latency buckets, in microseconds; a last, unbounded bucket
        /// follows them.
        public var latencyBoundsMicroseconds: [Int64]
        /// Requests answered by operation and latency bucket (from receipt to reply sent):
        /// one count per bucket of ``latencyBoundsMicroseconds``, then the unbounded one.
        public var latency: [String: [Int64]]
        /// Events published on the events socket.
        public var eventsPublished: Int64
        /// Store transactions (group commits) run.
        public var batches: Int64
        /// Store operations that failed (each answered with `storage_error`).
        public var storeErrors: Int64

        /// Creates the figures.
        public init(
            startedAt: Date, uptimeMilliseconds: Int64, requests: [String: [String: Int64]],
            latencyBoundsMicroseconds: [Int64], latency: [String: [Int64]], eventsPublished: Int64, batches: Int64,
            storeErrors: Int64
        ) {
            self.startedAt = startedAt
            self.uptimeMilliseconds = uptimeMilliseconds
            self.requests = requests
            self.latencyBoundsMicroseconds = latencyBoundsMicroseconds
            self.latency = latency
            self.eventsPublished = eventsPublished
            self.batches = batches
            self.storeErrors = storeErrors
        }
    }

    public var v: Int = 1
    public var id: RequestID?
    public var ok: Bool
    public var error: WireError?
    public var quote: WireQuote?
    public var history: [HistoryStep]?
    public var replayed: Bool?
    public var bookingError: WireError?
    /// When the request left the quote waiting: its place in line, 1 for the next served.
    public var waitPosition: Int?
    /// For `setDuty`: the mechanic, and whether they are now on duty.
    public var mechanic: WireQuote.WireMechanic?
    public var onDuty: Bool?
    public var quotes: [WireQuote]?
    /// For `list`: the `after` to ask for the next page; absent on the last one.
    public var next: Int64?
    /// The page stopped at the daemon's reply budget (`maxReplyBytes`) before its `limit`:
    /// ask again from where it ended (`list`'s ``next``, the last event's `seq`).
    public var truncated: Bool?
    public var mechanics: [MechanicStatus]?
    public var services: [WireService]?
    public var counts: [String: Int]?
    public var events: [WireEvent]?
    public var lastSeq: Int64?
    public var pong: Bool?
    /// For `ping`: `up` when the store answered, `down` when it failed (``storeError`` says how):
    /// a daemon whose store is down answers every write with `storage_error`.
    public var store: String?
    public var storeError: String?
    /// For `stats`: the longest any quote in line has waited, in milliseconds; absent when
    /// none waits.
    public var oldestWaitMilliseconds: Int64?
    /// For `stats`: active mechanics by availability, `{"busy":2,"free":5}`.
    public var mechanicCounts: [String: Int]?
    /// For `stats`: what the answering daemon did since it started.
    public var activity: Activity?
    /// For `catalog` and `applyCatalog`: the version of the catalog in force.
    public var catalogVersion: Int64?
    /// For `catalog`: the catalog in force, as a catalog file holds it.
    public var catalog: CatalogDocument?

    /// A successful reply to request `id`.
    public static func success(_ id: RequestID?) -> WireReply {
        WireReply(id: id, ok: true)
    }

    /// A refusal of request `id`.
    public static func failure(_ id: RequestID?, _ error: WireError) -> WireReply {
        WireReply(id: id, ok: false, error: error)
    }

    /// The wire form of a catalog service.
    public static func service(_ service: Service) -> WireService {
        WireService(
            name: service.name, minimumSkill: service.minimumSkill.name, priceCents: service.price.cents,
            price: service.price.formatted)
    }
}
