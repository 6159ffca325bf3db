import Foundation
public import Logging
import QuoteCore
public import QuoteStore
import QuoteWire
public import ZeroMQ

/// Turns a batch of received messages into replies and events, in three stages: ``parse``
/// (decode and validate, on the I/O thread), ``StoreStage/execute(_:)`` (one store
/// transaction for every write, then the reads, on the store thread) and ``encode(_:)`` (on
/// the I/O thread again). No sockets here, so it can be tested on its own; ``CommandServer``
/// receives, hands batches over and sends.
public struct Engine {
    /// What a batch of messages came to, ready for the sockets.
    public struct Output {
        /// Multipart replies, each starting with the envelope it came with.
        public var replies: [[[UInt8]]] = []
        /// `[topic, body]` per committed event, in sequence order.
        public var events: [[[UInt8]]] = []
    }

    struct Pending: Sendable {
        var envelope: [[UInt8]]
        var id: RequestID?
        var action: RequestAction
    }

    /// A batch decoded on the I/O thread, for the store.
    struct Batch: Sendable {
        /// Replies already known (refusals), by the message's position.
        var replies: [[[UInt8]]?]
        var writes: [(index: Int, pending: Pending)] = []
        var reads: [(index: Int, pending: Pending)] = []
        var currency: Currency

        /// Messages in the batch.
        var count: Int { replies.count }
        var isEmpty: Bool { replies.isEmpty }
    }

    /// What the store made of a batch, for encoding on the I/O thread.
    struct Executed: Sendable {
        var batch: Batch
        /// One result per write, in order; `nil` when the store failed and applied nothing.
        var writeResults: [Result<CommandOutcome, QuoteError>]?
        /// One reply per read, in order.
        var readReplies: [ReadReply]
    }

    /// A read's reply; a quote it shows is kept as the domain value and written straight
    /// into the reply on the I/O thread, not turned into a `WireQuote` on the store thread.
    struct ReadReply: Sendable {
        var reply: WireReply
        var quote: Quote?
    }

    let store: any QuoteStore
    let configuration: DaemonConfiguration
    let logger: Logger
    private let codec = WireCodec()

    /// An engine over `store`, refusing what `configuration` does not allow (message size).
    public init(store: any QuoteStore, configuration: DaemonConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    /// All three stages on the calling thread: what the daemon does with a batch, without its
    /// threads and sockets (for tests and `quoted-bench engine`).
    public func handle(_ messages: [Multipart]) -> Output {
        encode(StoreStage(store: store, logger: logger).execute(parse(messages)))
    }

    /// Decodes and validates; malformed or invalid requests get their refusal at once.
    func parse(_ messages: [Multipart]) -> Batch {
        var batch = Self.newBatch(for: store)
        for message in messages { parse(message, into: &batch) }
        return batch
    }

    /// An empty batch for `store`, priced in its catalog's currency of this moment.
    static func newBatch(for store: any QuoteStore) -> Batch {
        Batch(replies: [], currency: store.currentCatalog.currency)
    }

    /// Decodes and validates one message into `batch`, as it arrives: the I/O thread parses
    /// while the store commits the batch before, so the store never waits for a parse.
    func parse(_ message: Multipart, into batch: inout Batch) {
        let index = batch.replies.count
        batch.replies.append(nil)
        switch parse(message, currency: batch.currency) {
        case .success(let pending):
            if case .write = pending.action {
                batch.writes.append((index, pending))
            } else {
                batch.reads.append((index, pending))
            }
        case .failure(let refusal):
            batch.replies[index] = refusal.envelope + [codec.encode(WireReply.failure(refusal.id, refusal.error))]
        }
    }

    /// Encodes every reply, in the order the requests came, and every committed event.
    func encode(_ executed: Executed) -> Output {
        let encoded = encodeReplies(executed)
        return Output(replies: encoded.replies, events: encodeEvents(encoded))
    }

    /// A batch's replies, and what its events are encoded from afterwards: clients wait on
    /// their replies, so ``CommandServer`` sends them before the events are even encoded
    /// (two thirds of a submission's encoding is its two events).
    struct EncodedReplies {
        var replies: [[[UInt8]]]
        /// Each successful write's outcome, with its final quote's JSON, shared with the reply.
        fileprivate var writes: [(outcome: CommandOutcome, quote: EncodedQuote)] = []
        fileprivate var currency: Currency
    }

    /// Encodes every reply, in the order the requests came.
    func encodeReplies(_ executed: Executed) -> EncodedReplies {
        let batch = executed.batch
        let currency = batch.currency
        // Filled by position; written through indices rather than by copying the batch's
        // arrays and their elements (callgrind, `quoted-bench engine`).
        var replies = [[[UInt8]]?](repeating: nil, count: batch.replies.count)
        for index in batch.replies.indices where batch.replies[index] != nil {
            replies[index] = batch.replies[index]
        }
        var writes: [(outcome: CommandOutcome, quote: EncodedQuote)] = []
        if let results = executed.writeResults {
            writes.reserveCapacity(results.count)
            for position in batch.writes.indices {
                let index = batch.writes[position].index
                let id = batch.writes[position].pending.id
                let body: [UInt8]
                switch results[position] {
                case .success(let outcome):
                    var success = WireReply.success(id)
                    if outcome.replayed { success.replayed = true }
                    success.bookingError = outcome.bookingError.map(WireError.init)
                    // The reply shows the state the write's last quote event announces: its
                    // JSON is written once, for both.
                    let quote = codec.encodeQuote(outcome.quote, currency: currency)
                    body = codec.encode(success, quote: quote)
                    if !outcome.events.isEmpty { writes.append((outcome, quote)) }
                case .failure(let error):
                    body = codec.encode(WireReply.failure(id, WireError(error)))
                }
                replies[index] = batch.writes[position].pending.envelope + [body]
            }
        } else {
            let refusal = WireError(code: .storageError, message: "the store failed and nothing was applied; retry")
            for write in batch.writes {
                replies[write.index] =
                    write.pending.envelope + [codec.encode(WireReply.failure(write.pending.id, refusal))]
            }
        }
        for position in batch.reads.indices {
            let read = batch.reads[position]
            let answer = executed.readReplies[position]
            let body =
                answer.quote.map { codec.encode(answer.reply, quote: codec.encodeQuote($0, currency: currency)) }
                ?? codec.encode(answer.reply)
            replies[read.index] = read.pending.envelope + [body]
        }
        return EncodedReplies(replies: replies.compactMap { $0 }, writes: writes, currency: currency)
    }

    /// Encodes the committed events of the batch whose replies are `encoded`, as `[topic,
    /// body]`, in sequence order.
    func encodeEvents(_ encoded: EncodedReplies) -> [[[UInt8]]] {
        var events: [[[UInt8]]] = []
        events.reserveCapacity(encoded.writes.count * 2)
        for write in encoded.writes {
            for event in write.outcome.events {
                events.append([
                    Array(event.type.utf8),
                    encode(event, currency: encoded.currency, final: write.outcome.quote, encodedAs: write.quote),
                ])
            }
        }
        return events
    }

    /// An event's body; a quote event showing the write's `final` state reuses its JSON.
    private func encode(
        _ event: StoredEvent, currency: Currency, final: Quote, encodedAs finalJSON: EncodedQuote
    ) -> [UInt8] {
        guard case .quote(_, let quote) = event.kind else {
            return codec.encode(StoreStage.wireEvent(event, currency: currency))
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
        return codec.encode(StoreStage.wireEvent(event, currency: currency, withQuote: false), quote: encoded)
    }

    func prune() {
        do {
            let pruned = try store.pruneEvents(now: Date())
            if pruned > 0 { logger.info("pruned old events", metadata: ["count": "\(pruned)"]) }
        } catch {
            logger.warning("event pruning failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Decoding

    private struct Refusal: Error {
        var envelope: [[UInt8]]
        var id: RequestID?
        var error: WireError
    }

    /// Splits the ROUTER envelope from the body and decodes the request.
    ///
    /// `[identity, "", body]` is the protocol (REQ, or DEALER with a delimiter);
    /// `[identity, body]` is accepted too. Anything else is a malformed envelope, answered
    /// on the same envelope so a REQ or DEALER client still hears about it.
    private func parse(_ message: Multipart, currency: Currency) -> Result<Pending, Refusal> {
        let frames = message.frames
        let envelope: [[UInt8]]
        let body: [UInt8]
        if frames.count == 3 && frames[1].isEmpty {
            envelope = Array(frames[0...1])
            body = frames[2]
        } else if frames.count == 2 && !frames[1].isEmpty {
            envelope = [frames[0]]
            body = frames[1]
        } else {
            let delimiter = frames.dropFirst().firstIndex(where: \.isEmpty)
            let prefix = delimiter.map { Array(frames[...$0]) } ?? Array(frames.prefix(1))
            return .failure(
                Refusal(
                    envelope: prefix, id: nil,
                    error: WireError(
                        code: .malformedEnvelope,
                        message:
                            "expected one JSON frame after the envelope, got \(max(frames.count - prefix.count, 0))")))
        }
        guard body.count <= configuration.maxMessageBytes else {
            return .failure(
                Refusal(
                    envelope: envelope, id: nil,
                    error: WireError(
                        code: .messageTooLarge,
                        message: "the request has \(body.count) bytes; the limit is \(configuration.maxMessageBytes)")))
        }
        switch codec.decodeRequest(body) {
        case .failure(let error):
            return .failure(Refusal(envelope: envelope, id: nil, error: error))
        case .success(let request):
            do {
                return .success(
                    Pending(envelope: envelope, id: request.id, action: try request.action(currency: currency)))
            } catch {
                return .failure(Refusal(envelope: envelope, id: request.id, error: error))
            }
        }
    }
}
