import Foundation
import Logging
import QuoteCore
import QuoteStore
import QuoteWire
import ZeroMQ

/// Turns a batch of received messages into replies and events: decode, validate, one store
/// transaction for every write, then the reads, then encode. No sockets here, so it can be
/// tested on its own; ``CommandServer`` does the sending.
struct Engine {
    struct Output {
        /// Multipart replies, each starting with the envelope it came with.
        var replies: [[[UInt8]]] = []
        /// `[topic, body]` per committed event, in sequence order.
        var events: [[[UInt8]]] = []
    }

    private struct Pending {
        var envelope: [[UInt8]]
        var id: RequestID?
        var action: RequestAction
    }

    let store: any QuoteStore
    let configuration: DaemonConfiguration
    let logger: Logger
    private let codec = WireCodec()
    private let startedAt = Date()

    init(store: any QuoteStore, configuration: DaemonConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
    }

    func handle(_ messages: [Multipart]) -> Output {
        var output = Output()
        var replies: [[[UInt8]]?] = Array(repeating: nil, count: messages.count)
        var writes: [(index: Int, pending: Pending)] = []
        var reads: [(index: Int, pending: Pending)] = []
        let currency = store.currentCatalog.currency

        for (index, message) in messages.enumerated() {
            switch parse(message, currency: currency) {
            case .success(let pending):
                if case .write = pending.action {
                    writes.append((index, pending))
                } else {
                    reads.append((index, pending))
                }
            case .failure(let refusal):
                replies[index] = refusal.envelope + [codec.encode(WireReply.failure(refusal.id, refusal.error))]
            }
        }

        if !writes.isEmpty {
            let commands = writes.map { write -> StoreCommand in
                guard case .write(let command) = write.pending.action else { preconditionFailure("writes only") }
                return command
            }
            do {
                let results = try store.apply(commands)
                for (write, result) in zip(writes, results) {
                    let reply: WireReply
                    switch result {
                    case .success(let outcome):
                        var success = WireReply.success(write.pending.id)
                        success.quote = WireQuote(outcome.quote, currency: currency)
                        if outcome.replayed { success.replayed = true }
                        success.bookingError = outcome.bookingError.map(WireError.init)
                        reply = success
                        for event in outcome.events {
                            output.events.append([
                                Array(event.type.utf8), codec.encode(wireEvent(event, currency: currency)),
                            ])
                        }
                    case .failure(let error):
                        reply = .failure(write.pending.id, WireError(error))
                    }
                    replies[write.index] = write.pending.envelope + [codec.encode(reply)]
                }
            } catch {
                logger.error(
                    "store failed; batch not applied", metadata: ["error": "\(error)", "commands": "\(commands.count)"])
                let refusal = WireError(code: .storageError, message: "the store failed and nothing was applied; retry")
                for write in writes {
                    replies[write.index] =
                        write.pending.envelope + [codec.encode(WireReply.failure(write.pending.id, refusal))]
                }
            }
        }

        for read in reads {
            let reply: WireReply
            do {
                reply = try answer(read.pending, currency: currency)
            } catch {
                logger.error("store read failed", metadata: ["error": "\(error)"])
                reply = .failure(
                    read.pending.id, WireError(code: .storageError, message: "the store could not be read; retry"))
            }
            replies[read.index] = read.pending.envelope + [codec.encode(reply)]
        }
        output.replies = replies.compactMap { $0 }
        return output
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

    // MARK: Reads

    private func answer(_ pending: Pending, currency: Currency) throws -> WireReply {
        guard case .read(let query) = pending.action else { preconditionFailure("only reads are answered here") }
        var reply = WireReply.success(pending.id)
        switch query {
        case .get(let id):
            guard let record = try store.quote(id) else {
                return .failure(
                    pending.id, WireError(code: .init(rawValue: "unknown_quote"), message: "no quote \(id)"))
            }
            reply.quote = WireQuote(record.quote, currency: currency)
            reply.history = record.history.map {
                WireReply.HistoryStep(from: $0.from?.rawValue, to: $0.to.rawValue, at: $0.at, seq: $0.seq)
            }
        case .list(let status, let after, let limit):
            let quotes = try store.quotes(status: status, afterID: after, limit: limit)
            reply.quotes = quotes.map { WireQuote($0, currency: currency) }
            if quotes.count == limit { reply.next = quotes.last?.id.rawValue }
        case .mechanics(let freeOnly, let skill):
            reply.mechanics = try store.mechanics().filter { state in
                (!freeOnly || state.isFree) && (skill.map { state.mechanic.skill == $0 } ?? true)
            }.map { state in
                WireReply.MechanicStatus(
                    id: state.mechanic.id.rawValue, name: state.mechanic.name, skill: state.mechanic.skill.name,
                    busy: !state.isFree, quoteId: state.quote?.rawValue, freeSince: state.freeSince)
            }
        case .services:
            reply.services = store.currentCatalog.services.map(WireReply.service)
        case .stats:
            reply.counts = Dictionary(uniqueKeysWithValues: try store.counts().map { ($0.key.rawValue, $0.value) })
            reply.lastSeq = try store.lastSequence()
        case .events(let since, let limit):
            reply.events = try store.events(after: since, limit: limit).map { wireEvent($0, currency: currency) }
            reply.lastSeq = try store.lastSequence()
        case .ping:
            reply.pong = true
            reply.lastSeq = try store.lastSequence()
        }
        return reply
    }

    private func wireEvent(_ event: StoredEvent, currency: Currency) -> WireEvent {
        switch event.kind {
        case .quote(let from, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.id.rawValue, from: from?.rawValue,
                to: quote.status.rawValue, quote: WireQuote(quote, currency: currency))
        case .mechanicBusy(let mechanic, let quote), .mechanicFree(let mechanic, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.rawValue,
                mechanic: WireQuote.WireMechanic(mechanic))
        }
    }
}
