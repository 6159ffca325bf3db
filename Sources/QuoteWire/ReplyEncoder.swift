import Foundation
public import QuoteCore
public import QuoteRules
public import QuoteStore

/// The last stage: turns what the store made of a batch (`CommittedBatch`) into bytes, a
/// reply per request in the order they came and a `PublishedEvent` (topic, body) per committed
/// event, in `seq` order. Replies first (``encodeReplies(_:activity:)``): clients wait on them,
/// so the daemon sends them before the events are even encoded
/// (``encodeEvents(_:)``; a submission's two events cost nearly as much as its reply). One
/// encoder per thread: it reuses its codec.
public struct ReplyEncoder {
    /// The budget of one reply: a page (`list`, `events`, `waiting`, `mechanics`,
    /// `services`) ends before it and says so with `truncated`.
    public let maxReplyBytes: Int
    private let codec = WireCodec()

    /// The most a history step takes in a reply (two state names, a time, a 19-digit `seq`),
    /// rounded up: a `get`'s history is cut to what `maxReplyBytes` holds of these.
    static let historyStepBytes = 128

    /// An encoder whose pages end before `maxReplyBytes`.
    public init(maxReplyBytes: Int) {
        self.maxReplyBytes = maxReplyBytes
    }

    /// A batch's replies, and what its events are encoded from afterwards.
    public struct EncodedReplies {
        /// Multipart replies, each starting with the envelope it came with, in request order.
        public var replies: [[[UInt8]]]
        /// Each request's ticket, with the code it was answered with: for the figures.
        public var tickets: [RequestTicket]
        /// Each successful write's events and final quote, with that quote's JSON, shared with
        /// the reply: only what the events need, not the whole outcome (each copy of which
        /// retains every string it holds).
        fileprivate var writes: [Written] = []
        fileprivate var currency: Currency
    }

    /// What a successful write's events are encoded from.
    fileprivate struct Written {
        var events: [StoredEvent]
        /// The state the write left its quote in, and its JSON as the reply has it.
        var final: Quote?
        var json: EncodedQuote?
    }

    /// Encodes every reply of `committed`, in the order the requests came; a `stats` answer
    /// carries `activity`, the daemon's recent figures. Each reply's frames are its
    /// ticket's envelope, the body appended in place: the tickets returned keep none.
    public func encodeReplies(
        _ committed: consuming CommittedBatch<RequestTicket>, activity: () -> WireReply.Activity? = { nil }
    ) -> EncodedReplies {
        var tickets = committed.batch.takeTickets()
        let batch = committed.batch
        let currency = batch.catalog.currency
        // Filled by position; refusals were written when they were decoded.
        var replies = [[[UInt8]]?](repeating: nil, count: tickets.count)
        for index in tickets.indices {
            if let refusal = tickets[index].refusal { replies[index] = Self.frames(&tickets[index], refusal) }
        }
        var writes: [Written] = []
        if let results = committed.writeResults {
            writes.reserveCapacity(results.count)
            for (position, index) in batch.writeIndices.enumerated() {
                let body: [UInt8]
                // One switch, its payload borrowed: each copy of an outcome retains all it holds.
                switch results[position] {
                case .success(let outcome):
                    let quote: EncodedQuote?
                    (body, quote) = encode(outcome, for: tickets[index].id, currency: currency)
                    if !outcome.events.isEmpty {
                        writes.append(Written(events: outcome.events, final: outcome.quote, json: quote))
                    }
                case .failure(let error):
                    let refusal = WireError(error)
                    tickets[index].code = refusal.code
                    body = codec.encode(WireReply.failure(tickets[index].id, refusal))
                }
                // A request of the daemon's own (no envelope) is answered to no one.
                if !tickets[index].envelope.isEmpty { replies[index] = Self.frames(&tickets[index], body) }
            }
        } else {
            let refusal = WireError(
                code: .storageError,
                message: committed.writesMayHaveApplied
                    ? "the store failed while committing: the outcome is unknown, and it may have been applied;"
                        + " check (get, or send it again with the same idempotency key) before sending it again"
                    : "the store failed and nothing was applied; retry")
            for index in batch.writeIndices {
                tickets[index].code = refusal.code
                guard !tickets[index].envelope.isEmpty else { continue }
                let body = codec.encode(WireReply.failure(tickets[index].id, refusal))
                replies[index] = Self.frames(&tickets[index], body)
            }
        }
        for position in batch.reads.indices {
            let index = batch.reads[position].index
            let answer = committed.readResults[position]
            let (body, code) = encode(answer, for: tickets[index].id, currency: currency, activity: activity)
            tickets[index].code = code
            replies[index] = Self.frames(&tickets[index], body)
        }
        return EncodedReplies(
            replies: replies.compactMap { $0 }, tickets: tickets, writes: writes, currency: currency)
    }

    /// A reply's frames: `ticket`'s envelope, taken out of it, then `body`. The envelope is
    /// the array the request came in (``RequestDecoder``), with room for the body left
    /// where the request's was.
    private static func frames(_ ticket: inout RequestTicket, _ body: [UInt8]) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        swap(&frames, &ticket.envelope)
        frames.append(body)
        return frames
    }

    /// A write's reply, and the JSON of the quote it shows (the state the write's last quote
    /// event announces: written once, for both).
    private func encode(
        _ result: Result<CommandOutcome, QuoteError>, for id: RequestID?, currency: Currency
    ) -> (reply: [UInt8], quote: EncodedQuote?) {
        switch result {
        case .success(let outcome): encode(outcome, for: id, currency: currency)
        case .failure(let error): (codec.encode(WireReply.failure(id, WireError(error))), nil)
        }
    }

    /// A successful write's reply, and the JSON of the quote it shows, as
    /// ``encode(_:for:currency:)-(Result<CommandOutcome,QuoteError>,_,_)`` writes them.
    private func encode(
        _ outcome: borrowing CommandOutcome, for id: RequestID?, currency: Currency
    ) -> (reply: [UInt8], quote: EncodedQuote?) {
        var members = WriteMembers(
            replayed: outcome.replayed ? true : nil, bookingError: outcome.bookingError.map(WireError.init),
            waitPosition: outcome.waitPosition, catalogVersion: outcome.catalogVersion)
        if let duty = outcome.duty {
            members.mechanic = WireQuote.WireMechanic(duty.mechanic)
            members.onDuty = duty.onDuty
        }
        if let mechanic = outcome.mechanic { members.mechanic = WireQuote.WireMechanic(mechanic) }
        // A write with a quote, nearly every one: its reply written without a `WireReply`.
        if let final = outcome.quote {
            return codec.encodeWrite(id: id, members, writing: final, currency: currency)
        }
        return (codec.encode(members.reply(to: id)), nil)
    }

    /// A read's reply and the error code it carries. A page ends before ``maxReplyBytes``
    /// and says so with `truncated`.
    private func encode(
        _ answer: QueryAnswer, for id: RequestID?, currency: Currency, activity: () -> WireReply.Activity?
    ) -> (reply: [UInt8], code: WireError.Code?) {
        var reply = WireReply.success(id)
        switch answer {
        case .quote(let record):
            // A history longer than the reply budget allows: its first step and its latest,
            // and `truncated` (the event log has every change).
            let limit = max(2, maxReplyBytes / Self.historyStepBytes)
            let history =
                record.history.count <= limit
                ? record.history[...] : record.history.prefix(1) + record.history.suffix(limit - 1)
            if history.count < record.history.count { reply.truncated = true }
            reply.history = history.map {
                WireReply.HistoryStep(from: $0.from?.rawValue, to: $0.to.rawValue, at: $0.at, seq: $0.seq)
            }
            return (codec.encode(reply, writing: record.quote, currency: currency).reply, nil)
        case .quotes(let quotes, let limit, let examinedThrough):
            // A search that stopped before filling the page goes on after the last quote it
            // examined, which may be past the last it found.
            let body = page(
                quotes, reply, truncated: examinedThrough != nil, as: .quotes,
                encode: { encodeQuote($0, currency: currency) },
                fill: { reply, page in
                    if page.count < quotes.count || quotes.count == limit {
                        reply.next = page.last?.id.rawValue
                    } else if let examinedThrough {
                        reply.next = examinedThrough.rawValue
                    }
                })
            return (body, nil)
        case .mechanics(let states):
            let body = page(states, reply) { reply, page in
                reply.mechanics = page.map { state in
                    WireReply.MechanicStatus(
                        id: state.mechanic.id.rawValue, name: state.mechanic.name, skill: state.mechanic.skill.name,
                        busy: !state.isFree, quoteId: state.quote?.rawValue, freeSince: state.freeSince,
                        onDuty: state.onDuty)
                }
            }
            return (body, nil)
        case .catalog(let catalog):
            reply.catalogVersion = catalog.version
            // A roster too long for one reply: the mechanics that fit, and `truncated` (the
            // `mechanics` operation pages through them all).
            let document = CatalogDocument(catalog)
            let bytes = page(document.mechanics, reply) { reply, mechanics in
                var shown = document
                shown.mechanics = Array(mechanics)
                reply.catalog = shown
            }
            return (bytes, nil)
        case .services(let services):
            return (page(services, reply) { reply, page in reply.services = page.map(WireReply.service) }, nil)
        case .stats(let state):
            reply.counts = Dictionary(uniqueKeysWithValues: state.counts.map { ($0.key.rawValue, $0.value) })
            reply.lastSeq = state.lastSeq
            reply.oldestWaitMilliseconds = state.oldestWaiting.map {
                max(0, Int64(clampingFinite: Date().timeIntervalSince($0) * 1_000))
            }
            reply.mechanicCounts = ["busy": state.busy, "free": state.free, "offDuty": state.offDuty]
            reply.activity = activity()
        case .waiting(let quotes, let truncated):
            let body = page(
                quotes, reply, truncated: truncated, as: .quotes, encode: { encodeQuote($0, currency: currency) })
            return (body, nil)
        case .events(let events, let lastSeq, let truncated):
            reply.lastSeq = lastSeq
            let body = page(
                events, reply, truncated: truncated, as: .events, encode: { encode($0, currency: currency) })
            return (body, nil)
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
            let code: WireError.Code? =
                if case .failure(let error) = result { WireError(error).code } else { nil }
            return (encode(result, for: id, currency: currency).reply, code)
        case .refused(let error):
            let refusal = WireError(error)
            return (codec.encode(WireReply.failure(id, refusal)), refusal.code)
        case .storeFailed:
            let refusal = WireError(code: .storageError, message: "the store could not be read; retry")
            return (codec.encode(WireReply.failure(id, refusal)), refusal.code)
        }
        return (codec.encode(reply), nil)
    }

    /// `reply` with as many of `items` as fit in the reply budget, set by `fill`; marked
    /// `truncated` when some were left out (or the store read fewer than asked, `truncated`).
    /// Each further try cuts the page in proportion to its excess.
    private func page<Item>(
        _ items: [Item], _ reply: WireReply, truncated: Bool = false,
        _ fill: (inout WireReply, ArraySlice<Item>) -> Void
    ) -> [UInt8] {
        page(items.count, reply, truncated: truncated) { reply, count in
            fill(&reply, items[..<count])
            return codec.encode(reply)
        }
    }

    /// The reply's list whose items are written ahead of it.
    private enum EncodedList { case quotes, events }

    /// `reply` with as many of `items` as fit in the reply budget as its `list`, each written
    /// once by `encode` (as far as the budget reaches: the work is about twice the budget
    /// however many rows were read), the rest of the reply set by `fill`; marked as the other
    /// `page` marks its replies.
    private func page<Item>(
        _ items: [Item], _ reply: WireReply, truncated: Bool = false, as list: EncodedList,
        encode: (Item) -> [UInt8], fill: (inout WireReply, ArraySlice<Item>) -> Void = { _, _ in }
    ) -> [UInt8] {
        // The reply's own fields (id, lastSeq, next) fit in what is kept aside.
        var total = 1_024
        var encoded: [[UInt8]] = []
        for item in items {
            let json = encode(item)
            total += json.count + 1
            // One item at least, however large (each is bounded by the request limits), so
            // that a page always moves its reader on.
            guard total <= maxReplyBytes || encoded.isEmpty else { break }
            encoded.append(json)
        }
        return page(encoded.count, reply, truncated: truncated || encoded.count < items.count) { reply, count in
            fill(&reply, items[..<count])
            let page = encoded[..<count]
            return switch list {
            case .quotes: codec.encode(reply, quote: nil, quotes: page, events: nil)
            case .events: codec.encode(reply, quote: nil, quotes: nil, events: page)
            }
        }
    }

    /// The first `available` items' reply (`write` makes the reply of the first `count`), with
    /// as many as fit in the budget: one at least.
    private func page(
        _ available: Int, _ reply: WireReply, truncated: Bool, write: (inout WireReply, Int) -> [UInt8]
    ) -> [UInt8] {
        let budget = maxReplyBytes
        var count = available
        while true {
            var attempt = reply
            if truncated || count < available { attempt.truncated = true }
            let bytes = write(&attempt, count)
            guard bytes.count > budget, count > 1 else { return bytes }
            count = max(1, min(count - 1, count * (budget - budget / 8) / bytes.count))
        }
    }

    /// `quote`'s JSON as the daemon writes every quote it sends.
    private func encodeQuote(_ quote: Quote, currency: Currency) -> [UInt8] {
        codec.quoteJSON(quote, currency: currency)
    }

    // MARK: Events

    /// Encodes the committed events of the batch whose replies are `encoded`, each its topic
    /// and body, in sequence order.
    public func encodeEvents(_ encoded: EncodedReplies) -> [PublishedEvent] {
        var events: [PublishedEvent] = []
        events.reserveCapacity(encoded.writes.count * 2)
        for write in encoded.writes {
            // Unwrapped once a write, not once an event: each copy of an optional encoded
            // quote goes through its type's metadata.
            guard let final = write.final, let json = write.json else {
                for event in write.events {
                    events.append(
                        PublishedEvent(
                            seq: event.seq, topic: event.topicFrame, body: encode(event, currency: encoded.currency)))
                }
                continue
            }
            for event in write.events {
                events.append(
                    PublishedEvent(
                        seq: event.seq, topic: event.topicFrame,
                        body: encode(event, currency: encoded.currency, final: final, encodedAs: json)))
            }
        }
        return events
    }

    /// The number of the last event the batch whose replies are `encoded` committed; `nil`
    /// when it committed none.
    public func lastEventSeq(_ encoded: EncodedReplies) -> Int64? {
        encoded.writes.last { !$0.events.isEmpty }?.events.last?.seq
    }

    /// Events read from the log (other daemons'), each its topic and body by its seq, their
    /// amounts in `currency`.
    public func encodeLogged(_ events: [StoredEvent], currency: Currency) -> [PublishedEvent] {
        // A quote's events in a row (a new quote's two first) mostly show one request: its
        // JSON is written once and copied into the next.
        var previous: (quote: Quote, json: EncodedQuote)?
        return events.map { event in
            guard let quote = event.quote else {
                return PublishedEvent(seq: event.seq, topic: event.topicFrame, body: codec.encode(event, quote: nil))
            }
            let sibling = previous.flatMap { previous in
                previous.quote.id == quote.id && quote.hasSameRequest(as: previous.quote) ? previous.json : nil
            }
            let (body, json) = codec.encode(event, writing: quote, currency: currency, sharingRequestWith: sibling)
            previous = (quote, json)
            return PublishedEvent(seq: event.seq, topic: event.topicFrame, body: body)
        }
    }

    /// An event's body, its quote (if it has one) written from the domain.
    private func encode(_ event: StoredEvent, currency: Currency) -> [UInt8] {
        guard let quote = event.quote else { return codec.encode(event, quote: nil) }
        return codec.encode(event, writing: quote, currency: currency, sharingRequestWith: nil).event
    }

    /// An event's body; a quote event showing the write's `final` state reuses its JSON.
    private func encode(
        _ event: StoredEvent, currency: Currency, final: Quote, encodedAs finalJSON: EncodedQuote
    ) -> [UInt8] {
        guard let quote = event.quote else { return codec.encode(event, quote: nil) }
        // The state first: it tells the write's earlier states apart without comparing the
        // whole quote.
        if quote.status == final.status && quote == final { return codec.encode(event, quote: finalJSON) }
        let sibling = quote.hasSameRequest(as: final) ? finalJSON : nil
        return codec.encode(event, writing: quote, currency: currency, sharingRequestWith: sibling).event
    }
}
