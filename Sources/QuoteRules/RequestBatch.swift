public import Foundation
public import QuoteCore

/// The requests of one group commit, as they were received: the writes for one store
/// transaction, the reads answered after it, and for every request, in arrival order, the
/// `Ticket` the side that received it needs to answer it (its return address, its id). The
/// store side never looks inside a ticket.
public struct RequestBatch<Ticket: Sendable>: Sendable {
    /// One per request, in the order they came.
    @inlinable public var tickets: [Ticket] { _tickets }
    /// The checked writes, in the order they came: what the batch's transaction applies.
    @inlinable public var writeRequests: [CheckedRequest] { _writeRequests }
    /// Each write's position in ``tickets``, in the order of ``writeRequests``.
    @inlinable public var writeIndices: [Int] { _writeIndices }
    /// The reads, each with its position in ``tickets``.
    @inlinable public var reads: [(index: Int, request: ReadRequest)] { _reads }
    /// The catalog the batch is checked, applied and priced against: the one in force when
    /// it began, or a newer one put in force while it was received (``adopt(_:)``).
    public private(set) var catalog: Catalog
    /// When the batch began: the moment submissions are validated at (coupon expiry).
    public let started: Date
    /// Reads that load a page or scan the store (``ReadRequest/readsManyRows``): each may
    /// cost up to a reply budget to encode, so a batch holds a bounded number.
    @inlinable public var pageReads: Int { _pageReads }

    // Stored apart from their read-only views so that the methods below can be inlined,
    // and specialized for the caller's ticket, in the modules that fill a batch.
    @usableFromInline var _tickets: [Ticket] = []
    // Two arrays, not one of pairs: the transaction takes the requests as they are, without
    // a copy of each (which would retain all it holds).
    @usableFromInline var _writeRequests: [CheckedRequest] = []
    @usableFromInline var _writeIndices: [Int] = []
    @usableFromInline var _reads: [(index: Int, request: ReadRequest)] = []
    @usableFromInline var _pageReads = 0

    /// An empty batch against `catalog`, begun at `started`, with room for `capacity`
    /// requests (and as many writes) before its arrays grow.
    public init(catalog: Catalog, started: Date = Date(), capacity: Int = 0) {
        self.catalog = catalog
        self.started = started
        if capacity > 0 {
            _tickets.reserveCapacity(capacity)
            _writeRequests.reserveCapacity(capacity)
            _writeIndices.reserveCapacity(capacity)
        }
    }

    /// Checks the requests still to come against `catalog`, if it is newer than the batch's:
    /// those received already stay as they were checked (the transaction checks again a name
    /// the old catalog did not know).
    public mutating func adopt(_ catalog: Catalog) {
        if catalog.version > self.catalog.version { self.catalog = catalog }
    }

    /// Takes the tickets out of the batch, which keeps none: for the side that answers the
    /// requests, which changes each ticket in place.
    public mutating func takeTickets() -> [Ticket] {
        var taken: [Ticket] = []
        swap(&taken, &_tickets)
        return taken
    }

    /// Requests in the batch.
    @inlinable public var count: Int { _tickets.count }
    /// Whether the batch holds no request.
    @inlinable public var isEmpty: Bool { _tickets.isEmpty }

    /// Adds a request answered already (refused by its checks): no store work.
    @inlinable public mutating func append(_ ticket: consuming Ticket) {
        _tickets.append(ticket)
    }

    /// Adds a checked write, for the batch's transaction.
    @inlinable public mutating func append(_ ticket: consuming Ticket, write request: consuming CheckedRequest) {
        _writeIndices.append(_tickets.count)
        _writeRequests.append(request)
        _tickets.append(ticket)
    }

    /// Adds a read, answered once the batch's writes are committed.
    @inlinable public mutating func append(_ ticket: consuming Ticket, read request: consuming ReadRequest) {
        if request.readsManyRows { _pageReads += 1 }
        _reads.append((_tickets.count, request))
        _tickets.append(ticket)
    }
}
