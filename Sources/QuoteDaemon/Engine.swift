import Foundation
public import Logging
import QuoteCore
import QuoteRules
public import QuoteStore
import QuoteWire
public import ZeroMQ

/// Turns a batch of received messages into replies and events, in three stages: ``parse``
/// (decode, validate, and check each command against a catalog snapshot, on the I/O thread),
/// ``StoreStage/execute(_:)`` (one store transaction for every write, then the reads) and
/// ``encode(_:)`` (on the I/O thread again). A request refused by its checks is answered from
/// the first stage and never waits for a commit. No sockets here, so it can be tested on its
/// own; ``CommandServer`` receives, hands batches over and sends.
public struct Engine {
    /// What a batch of messages came to, ready for the sockets.
    public struct Output {
        /// Multipart replies, each starting with the envelope it came with.
        public var replies: [[[UInt8]]] = []
        /// `[topic, body]` per committed event, in sequence order.
        public var events: [[[UInt8]]] = []
    }

    /// What a request asks of the store, once parsed and checked.
    enum Work: Sendable {
        /// A checked command, for the batch's transaction.
        case write(CheckedCommand)
        /// A query, answered from committed state.
        case read(ReadQuery)
        /// A submission refused by its checks that carries an idempotency key: answered with
        /// the quote submitted under that key, if there is one, else with the refusal.
        case replay(idempotencyKey: String, digest: SubmissionDigest, refusal: QuoteError)
    }

    struct Pending: Sendable {
        var envelope: [[UInt8]]
        var id: RequestID?
        /// The operation, for the figures; `nil` for the daemon's own work.
        var op: QuoteWire.Operation? = nil
        var work: Work
        /// Who asked: whose name the audit trail records, and which quotes they reach.
        var actor: Actor
    }

    /// A batch decoded on the I/O thread, for the store.
    struct Batch: Sendable {
        /// Replies already known (refusals), by the message's position.
        var replies: [[[UInt8]]?]
        /// Each request's operation and receipt, by position; `nil` for the daemon's own work.
        var marks: [RequestMark?] = []
        var writes: [(index: Int, pending: Pending)] = []
        var reads: [(index: Int, pending: Pending)] = []
        /// The catalog the batch is checked, applied and priced against.
        var catalog: Catalog
        /// When the batch began: the moment submissions are validated at (coupon expiry).
        var started: Date

        /// Reads answered with a page (`list`, `events`, `waiting`, `mechanics`, `services`):
        /// each may cost up to a reply budget to encode, so a batch holds a bounded number.
        var pageReads = 0

        /// Messages in the batch.
        var count: Int { replies.count }
        var isEmpty: Bool { replies.isEmpty }
        var currency: Currency { catalog.currency }
    }

    /// What the store made of a batch, for encoding on the I/O thread: domain values only.
    struct Executed: Sendable {
        var batch: Batch
        /// One result per write, in order; `nil` when the store failed and applied nothing.
        var writeResults: [Result<CommandOutcome, QuoteError>]?
        /// One result per read, in order.
        var readResults: [StoreStage.ReadResult]
    }

    let store: any QuoteStore
    let catalog: LiveCatalog
    let configuration: DaemonConfiguration
    /// The allow-list every request's key and role are checked against; `nil` without
    /// `security`, when every caller is anonymous and may do everything.
    let access: AccessControl?
    let logger: Logger
    /// Where each batch's requests are counted and timed.
    let metrics: DaemonMetrics
    let rulebook = Rulebook()
    private let codec = WireCodec()

    /// An engine over `store`, checking commands against `catalog`, callers against `access`,
    /// and refusing what `configuration` does not allow (message size).
    public init(
        store: any QuoteStore, catalog: LiveCatalog, configuration: DaemonConfiguration,
        access: AccessControl? = nil, logger: Logger, metrics: DaemonMetrics = .unexported()
    ) {
        self.metrics = metrics
        self.store = store
        self.catalog = catalog
        self.configuration = configuration
        self.access = access
        self.logger = logger
    }

    /// All three stages in turn: what the daemon does with a batch, without its threads and
    /// sockets (for tests and `quoted-bench engine`).
    public func handle(_ messages: [Multipart]) async -> Output {
        encode(
            await StoreStage(
                store: store, logger: logger, metrics: metrics, maximumRows: max(16, configuration.maxReplyBytes / 512)
            ).execute(parse(messages)))
    }

    /// Decodes, validates and checks; refused requests get their reply at once.
    func parse(_ messages: [Multipart]) -> Batch {
        var batch = newBatch()
        for message in messages { parse(message, into: &batch) }
        return batch
    }

    /// An empty batch, against the catalog of this moment.
    func newBatch() -> Batch { Self.newBatch(catalog) }

    /// An empty batch, against `catalog`'s catalog of this moment.
    static func newBatch(_ catalog: LiveCatalog) -> Batch {
        Batch(replies: [], catalog: catalog.current, started: Date())
    }

    /// Decodes, validates and checks one message into `batch`, as it arrives: the I/O thread
    /// parses while the store commits the batch before, so the store never waits for a parse.
    func parse(_ message: Multipart, into batch: inout Batch) {
        let index = batch.replies.count
        batch.replies.append(nil)
        let received = ContinuousClock.now
        switch parse(message, catalog: batch.catalog, at: batch.started) {
        case .success(let pending):
            batch.marks.append(RequestMark(op: pending.op, received: received))
            if case .write = pending.work {
                batch.writes.append((index, pending))
            } else {
                if case .read(let query) = pending.work, query.readsManyRows { batch.pageReads += 1 }
                batch.reads.append((index, pending))
            }
        case .failure(let refusal):
            batch.marks.append(RequestMark(op: refusal.op, received: received, code: refusal.error.code))
            // An envelope that cannot be answered (too deep, too large) is dropped.
            guard !refusal.envelope.isEmpty else { return }
            batch.replies[index] = refusal.envelope + [codec.encode(WireReply.failure(refusal.id, refusal.error))]
        }
    }

    /// Encodes every reply, in the order the requests came, and every committed event.
    func encode(_ executed: Executed) -> Output {
        let encoded = encodeReplies(executed)
        return Output(replies: encoded.replies, events: encodeEvents(encoded).map(\.message))
    }

    /// A batch's replies, and what its events are encoded from afterwards: clients wait on
    /// their replies, so ``CommandServer`` sends them before the events are even encoded
    /// (two thirds of a submission's encoding is its two events).
    struct EncodedReplies {
        var replies: [[[UInt8]]]
        /// Each request's operation, receipt and outcome, for the figures.
        var marks: [RequestMark?]
        /// Each successful write's outcome, with its final quote's JSON, shared with the reply.
        fileprivate var writes: [(outcome: CommandOutcome, quote: EncodedQuote)] = []
        fileprivate var currency: Currency
    }

    /// Encodes every reply, in the order the requests came.
    func encodeReplies(_ executed: Executed) -> EncodedReplies {
        let batch = executed.batch
        let currency = batch.currency
        // Filled by position; written through indices rather than by copying the batch's
        // arrays and their elements.
        var replies = [[[UInt8]]?](repeating: nil, count: batch.replies.count)
        for index in batch.replies.indices where batch.replies[index] != nil {
            replies[index] = batch.replies[index]
        }
        var writes: [(outcome: CommandOutcome, quote: EncodedQuote)] = []
        var marks = batch.marks
        if let results = executed.writeResults {
            writes.reserveCapacity(results.count)
            for position in batch.writes.indices {
                let index = batch.writes[position].index
                let id = batch.writes[position].pending.id
                let (body, quote) = encode(results[position], for: id, currency: currency)
                if let quote, case .success(let outcome) = results[position], !outcome.events.isEmpty {
                    writes.append((outcome, quote))
                }
                if case .failure(let error) = results[position] { marks[index]?.code = WireError(error).code }
                // A request of the daemon's own (no envelope) is answered to no one.
                let envelope = batch.writes[position].pending.envelope
                if !envelope.isEmpty { replies[index] = envelope + [body] }
            }
        } else {
            let refusal = WireError(code: .storageError, message: "the store failed and nothing was applied; retry")
            for write in batch.writes {
                marks[write.index]?.code = refusal.code
                replies[write.index] =
                    write.pending.envelope + [codec.encode(WireReply.failure(write.pending.id, refusal))]
            }
        }
        for position in batch.reads.indices {
            let read = batch.reads[position]
            switch executed.readResults[position] {
            case .failure(let error): marks[read.index]?.code = error.code
            case .written(.failure(let error)): marks[read.index]?.code = WireError(error).code
            default: break
            }
            replies[read.index] =
                read.pending.envelope + [
                    encode(executed.readResults[position], for: read.pending.id, currency: currency)
                ]
        }
        return EncodedReplies(replies: replies.compactMap { $0 }, marks: marks, writes: writes, currency: currency)
    }

    /// A write's reply, and the JSON of the quote it shows (the state the write's last quote
    /// event announces: written once, for both).
    private func encode(
        _ result: Result<CommandOutcome, QuoteError>, for id: RequestID?, currency: Currency
    ) -> (reply: [UInt8], quote: EncodedQuote?) {
        switch result {
        case .success(let outcome):
            var success = WireReply.success(id)
            if outcome.replayed { success.replayed = true }
            success.bookingError = outcome.bookingError.map(WireError.init)
            success.waitPosition = outcome.waitPosition
            let quote = codec.encodeQuote(outcome.quote, currency: currency)
            return (codec.encode(success, quote: quote), quote)
        case .failure(let error):
            return (codec.encode(WireReply.failure(id, WireError(error))), nil)
        }
    }

    /// A read's reply. A page (`list`, `events`, `waiting`, `mechanics`, `services`) ends
    /// before ``DaemonConfiguration/maxReplyBytes`` and says so with `truncated`.
    private func encode(_ result: StoreStage.ReadResult, for id: RequestID?, currency: Currency) -> [UInt8] {
        var reply = WireReply.success(id)
        switch result {
        case .quote(let record):
            reply.history = record.history.map {
                WireReply.HistoryStep(from: $0.from?.rawValue, to: $0.to.rawValue, at: $0.at, seq: $0.seq)
            }
            return codec.encode(reply, quote: codec.encodeQuote(record.quote, currency: currency))
        case .quotes(let quotes, let limit):
            let measure = { (quote: Quote) in codec.encodeQuote(quote, currency: currency).json.count }
            return page(quotes, reply, measure: measure) { reply, page in
                reply.quotes = page.map { WireQuote($0, currency: currency) }
                if page.count < quotes.count || quotes.count == limit { reply.next = page.last?.id.rawValue }
            }
        case .mechanics(let states):
            return page(states, reply) { reply, page in
                reply.mechanics = page.map { state in
                    WireReply.MechanicStatus(
                        id: state.mechanic.id.rawValue, name: state.mechanic.name, skill: state.mechanic.skill.name,
                        busy: !state.isFree, quoteId: state.quote?.rawValue, freeSince: state.freeSince)
                }
            }
        case .services(let services):
            return page(services, reply) { reply, page in reply.services = page.map(WireReply.service) }
        case .stats(let state):
            reply.counts = Dictionary(uniqueKeysWithValues: state.counts.map { ($0.key.rawValue, $0.value) })
            reply.lastSeq = state.lastSeq
            reply.oldestWaitMilliseconds = state.oldestWaiting.map {
                max(0, Int64(clampingFinite: Date().timeIntervalSince($0) * 1_000))
            }
            reply.mechanicCounts = ["busy": state.busy, "free": state.free]
            reply.activity = metrics.activity()
        case .waiting(let quotes, let truncated):
            let measure = { (quote: Quote) in codec.encodeQuote(quote, currency: currency).json.count }
            return page(quotes, reply, truncated: truncated, measure: measure) { reply, page in
                reply.quotes = page.map { WireQuote($0, currency: currency) }
            }
        case .events(let events, let lastSeq, let truncated):
            reply.lastSeq = lastSeq
            let measure = { (event: StoredEvent) in codec.encode(Self.wireEvent(event, currency: currency)).count }
            return page(events, reply, truncated: truncated, measure: measure) { reply, page in
                reply.events = page.map { Self.wireEvent($0, currency: currency) }
            }
        case .pong(let store):
            reply.pong = true
            switch store {
            case .success(let lastSeq):
                reply.store = "up"
                reply.lastSeq = lastSeq
            case .failure(let error):
                reply.store = "down"
                reply.storeError = error.message
            }
        case .written(let result):
            return encode(result, for: id, currency: currency).reply
        case .failure(let error):
            return codec.encode(WireReply.failure(id, error))
        }
        return codec.encode(reply)
    }

    /// `reply` with as many of `items` as fit in the reply budget, set by `fill`; marked
    /// `truncated` when some were left out (or the store read fewer than asked, `truncated`).
    /// With `measure` (an item's encoded size), items are counted in until the budget is
    /// reached, so the work is about twice the budget however many rows were read; each
    /// further try cuts the page in proportion to its excess.
    private func page<Item>(
        _ items: [Item], _ reply: WireReply, truncated: Bool = false, measure: ((Item) -> Int)? = nil,
        _ fill: (inout WireReply, ArraySlice<Item>) -> Void
    ) -> [UInt8] {
        let budget = configuration.maxReplyBytes
        var count = items.count
        if let measure {
            // The reply's own fields (id, lastSeq, next) fit in what is kept aside.
            var total = 1_024
            count = 0
            for item in items {
                total += measure(item) + 1
                guard total <= budget else { break }
                count += 1
            }
        }
        // One item at least, however large (each is bounded by the request limits), so that
        // a page always moves its reader on.
        count = max(count, min(1, items.count))
        while true {
            var attempt = reply
            fill(&attempt, items[..<count])
            if truncated || count < items.count { attempt.truncated = true }
            let bytes = codec.encode(attempt)
            guard bytes.count > budget, count > 1 else { return bytes }
            count = max(1, min(count - 1, count * (budget - budget / 8) / bytes.count))
        }
    }

    /// The event as clients see it; `withQuote: false` leaves out a quote event's quote, for
    /// a caller that splices in one it encoded already.
    static func wireEvent(_ event: StoredEvent, currency: Currency, withQuote: Bool = true) -> WireEvent {
        switch event.kind {
        case .quote(let from, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.id.rawValue, from: from?.rawValue,
                to: quote.status.rawValue, by: event.by, quote: withQuote ? WireQuote(quote, currency: currency) : nil)
        case .mechanicBusy(let mechanic, let quote), .mechanicFree(let mechanic, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.rawValue, by: event.by,
                mechanic: WireQuote.WireMechanic(mechanic))
        }
    }

    /// Encodes the committed events of the batch whose replies are `encoded`, as `[topic,
    /// body]`, in sequence order.
    func encodeEvents(_ encoded: EncodedReplies) -> [(seq: Int64, message: [[UInt8]])] {
        var events: [(seq: Int64, message: [[UInt8]])] = []
        events.reserveCapacity(encoded.writes.count * 2)
        for write in encoded.writes {
            for event in write.outcome.events {
                events.append(
                    (
                        event.seq,
                        [
                            Array(event.type.utf8),
                            encode(
                                event, currency: encoded.currency, final: write.outcome.quote, encodedAs: write.quote),
                        ]
                    ))
            }
        }
        return events
    }

    /// Events read from the log (other daemons'), each as `[topic, body]` by its seq, their
    /// amounts in the currency of `catalog`: one codec for the whole page.
    static func encodeLogged(_ events: [StoredEvent], catalog: LiveCatalog) -> [(seq: Int64, message: [[UInt8]])] {
        let codec = WireCodec()
        let currency = catalog.current.currency
        return events.map { event in
            (event.seq, [Array(event.type.utf8), codec.encode(wireEvent(event, currency: currency))])
        }
    }

    /// An event's body; a quote event showing the write's `final` state reuses its JSON.
    private func encode(
        _ event: StoredEvent, currency: Currency, final: Quote, encodedAs finalJSON: EncodedQuote
    ) -> [UInt8] {
        guard case .quote(_, let quote) = event.kind else {
            return codec.encode(Self.wireEvent(event, currency: currency))
        }
        // The state first: it tells the write's earlier states apart without comparing the
        // whole quote.
        let encoded: EncodedQuote
        if quote.status == final.status && quote == final {
            encoded = finalJSON
        } else if quote.request == final.request {
            encoded = codec.encodeQuote(quote, currency: currency, sharingRequestWith: finalJSON)
        } else {
            encoded = codec.encodeQuote(quote, currency: currency)
        }
        return codec.encode(Self.wireEvent(event, currency: currency, withQuote: false), quote: encoded)
    }

    // MARK: Decoding

    /// The most identity frames an envelope may carry before its delimiter: one per
    /// ROUTER/DEALER hop between the client and quoted.
    static let maximumEnvelopeDepth = 16

    private struct Refusal: Error {
        var envelope: [[UInt8]]
        var id: RequestID?
        var error: WireError
        var op: QuoteWire.Operation? = nil
    }

    /// Splits the ROUTER envelope from the body and decodes the request.
    ///
    /// The envelope is every frame up to and including the first empty one (the delimiter),
    /// however many identities brokers on the way added: `[identity, "", body]` from a REQ
    /// or a DEALER that sends the delimiter, `[proxy, identity, "", body]` through a
    /// ROUTER/DEALER proxy. Without a delimiter, `[identity, body]` (a DEALER that sends
    /// none). The reply goes back on the same envelope, so a malformed message is still
    /// answered.
    private func parse(_ message: Multipart, catalog: Catalog, at now: Date) -> Result<Pending, Refusal> {
        let frames = message.frames
        let envelope: [[UInt8]]
        let body: [UInt8]
        if let delimiter = frames.dropFirst().firstIndex(where: \.isEmpty) {
            // Identities are at most 255 bytes (ZMQ_ROUTING_ID), and no broker path is
            // deeper than a few hops: a larger envelope is not answered (it would be copied
            // into the reply) and is dropped.
            guard delimiter <= Self.maximumEnvelopeDepth, frames[..<delimiter].allSatisfy({ $0.count <= 255 })
            else {
                return .failure(
                    Refusal(
                        envelope: [], id: nil,
                        error: WireError(code: .malformedEnvelope, message: "envelope too deep or too large")))
            }
            envelope = Array(frames[...delimiter])
            let after = frames.count - delimiter - 1
            guard after == 1 else {
                return .failure(
                    Refusal(
                        envelope: envelope, id: nil,
                        error: WireError(
                            code: .malformedEnvelope,
                            message:
                                "expected one JSON frame after the envelope's empty delimiter (frame \(delimiter + 1) of \(frames.count)), got \(after)"
                        )))
            }
            body = frames[delimiter + 1]
        } else if frames.count == 2 && !frames[1].isEmpty && frames[0].count <= 255 {
            envelope = [frames[0]]
            body = frames[1]
        } else {
            return .failure(
                Refusal(
                    envelope: Array(frames.prefix(1)), id: nil,
                    error: WireError(
                        code: .malformedEnvelope,
                        message:
                            "expected the envelope to end in an empty delimiter frame, then one JSON frame; got \(max(frames.count - 1, 0)) frames after the identity and no delimiter"
                    )))
        }
        guard body.count <= configuration.maxMessageBytes else {
            return .failure(
                Refusal(
                    envelope: envelope, id: nil,
                    error: WireError(
                        code: .messageTooLarge,
                        message: "the request has \(body.count) bytes; the limit is \(configuration.maxMessageBytes)")))
        }
        let decoded = codec.decodeRequestKeepingID(body)
        switch decoded.result {
        case .failure(let error):
            return .failure(Refusal(envelope: envelope, id: decoded.id, error: error))
        case .success(let request):
            let op = request.op.flatMap(QuoteWire.Operation.init(rawValue:))
            let actor: Actor
            switch authorize(request, userId: message.metadata["User-Id"]) {
            case .success(let authorized): actor = authorized
            case .failure(let error): return .failure(Refusal(envelope: envelope, id: request.id, error: error, op: op))
            }
            let action: RequestAction
            do {
                action = try request.action(currency: catalog.currency)
            } catch {
                return .failure(Refusal(envelope: envelope, id: request.id, error: error, op: op))
            }
            switch action {
            case .read(let query):
                return .success(Pending(envelope: envelope, id: request.id, op: op, work: .read(query), actor: actor))
            case .write(let command):
                switch rulebook.check(command, in: catalog, at: now, by: actor) {
                case .success(let checked):
                    return .success(
                        Pending(envelope: envelope, id: request.id, op: op, work: .write(checked), actor: actor))
                case .failure(let refusal):
                    if case .submit(let submission, let key?, let book, let wait) = command {
                        let digest = SubmissionDigest(submission, book: book, wait: wait)
                        return .success(
                            Pending(
                                envelope: envelope, id: request.id, op: op,
                                work: .replay(idempotencyKey: key, digest: digest, refusal: refusal), actor: actor))
                    }
                    return .failure(
                        Refusal(envelope: envelope, id: request.id, error: WireError(refusal), op: op))
                }
            }
        }
    }

    /// Who sends `request`, and how far they reach with its operation: without `security`,
    /// anyone, everywhere; with it, the listed client of the connection's key (`userId`,
    /// set by the ZAP handler), as its role allows. A key withdrawn since it connected, or an
    /// operation its role does not allow, is `forbidden`.
    private func authorize(_ request: WireRequest, userId: String?) -> Result<Actor, WireError> {
        guard let access else { return .success(.anonymous) }
        guard let principal = access.principal(userId: userId) else {
            return .failure(
                WireError(
                    code: .forbidden,
                    message: "this key is no longer in the clients directory; nothing was applied"))
        }
        // An unknown operation is for the request's own validation to refuse.
        guard let operation = request.op.flatMap(Operation.init(rawValue:)) else {
            return .success(Actor(name: principal.name))
        }
        switch principal.role.access(to: operation) {
        case .denied:
            return .failure(
                WireError(
                    code: .forbidden,
                    message:
                        "the \(principal.role) role may not use \"\(operation.rawValue)\"; nothing was applied"))
        case .granted:
            return .success(Actor(name: principal.name))
        case .ownQuotes:
            return .success(Actor(name: principal.name, ownQuotesOnly: true))
        }
    }
}
