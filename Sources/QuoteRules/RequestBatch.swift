public import Foundation
public import QuoteCore

/// The requests of one group commit, as they were received: the writes for one store
/// transaction, the reads answered after it, and for every request, in arrival order, the
/// `Ticket` the side that received it needs to answer it (its return address, its id). The
/// store side never looks inside a ticket.
public struct RequestBatch<Ticket: Sendable>: Sendable {
    /// One per request, in the order they came.
    public private(set) var tickets: [Ticket] = []
    /// The checked writes, each with its position in ``tickets``.
    public private(set) var writes: [(index: Int, request: CheckedRequest)] = []
    /// The reads, each with its position in ``tickets``.
    public private(set) var reads: [(index: Int, request: ReadRequest)] = []
    /// The catalog the batch is checked, applied and priced against.
    public let catalog: Catalog
    /// When the batch began: the moment submissions are validated at (coupon expiry).
    public let started: Date
    /// Reads that load a page or scan the store (``ReadRequest/readsManyRows``): each may
    /// cost up to a reply budget to encode, so a batch holds a bounded number.
    public private(set) var pageReads = 0

    /// An empty batch against `catalog`, begun at `started`.
    public init(catalog: Catalog, started: Date = Date()) {
        self.catalog = catalog
        self.started = started
    }

    /// Requests in the batch.
    public var count: Int { tickets.count }
    /// Whether the batch holds no request.
    public var isEmpty: Bool { tickets.isEmpty }

    /// Adds a request answered already (refused by its checks): no store work.
    public mutating func append(_ ticket: Ticket) {
        tickets.append(ticket)
    }

    /// Adds a checked write, for the batch's transaction.
    public mutating func append(_ ticket: Ticket, write request: CheckedRequest) {
        writes.append((tickets.count, request))
        tickets.append(ticket)
    }

    /// Adds a read, answered once the batch's writes are committed.
    public mutating func append(_ ticket: Ticket, read request: ReadRequest) {
        if request.readsManyRows { pageReads += 1 }
        reads.append((tickets.count, request))
        tickets.append(ticket)
    }
}
