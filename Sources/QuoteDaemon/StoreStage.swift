import Foundation
import Logging
import QuoteCore
import QuoteStore
import QuoteWire

/// The middle stage of a batch, where every row is written: one store transaction for all
/// the batch's writes (group commit), then its reads, answered from committed state. It runs
/// on the store thread (``StoreWorker``) while the I/O thread decodes the next batch and
/// encodes the previous one.
struct StoreStage: Sendable {
    let store: any QuoteStore
    let logger: Logger

    func execute(_ batch: Engine.Batch) -> Engine.Executed {
        var executed = Engine.Executed(batch: batch, writeResults: [], readReplies: [])
        if !batch.writes.isEmpty {
            let commands = batch.writes.map { write -> StoreCommand in
                guard case .write(let command) = write.pending.action else { preconditionFailure("writes only") }
                return command
            }
            do {
                executed.writeResults = try store.apply(commands)
            } catch {
                logger.error(
                    "store failed; batch not applied", metadata: ["error": "\(error)", "commands": "\(commands.count)"])
                executed.writeResults = nil
            }
        }
        executed.readReplies = batch.reads.map { read in
            do {
                return try answer(read.pending, currency: batch.currency)
            } catch {
                logger.error("store read failed", metadata: ["error": "\(error)"])
                return Engine.ReadReply(
                    reply: .failure(
                        read.pending.id, WireError(code: .storageError, message: "the store could not be read; retry")))
            }
        }
        return executed
    }

    private func answer(_ pending: Engine.Pending, currency: Currency) throws -> Engine.ReadReply {
        guard case .read(let query) = pending.action else { preconditionFailure("only reads are answered here") }
        var reply = WireReply.success(pending.id)
        var quote: Quote?
        switch query {
        case .get(let id):
            guard let record = try store.quote(id) else {
                return Engine.ReadReply(
                    reply: .failure(
                        pending.id, WireError(code: .init(rawValue: "unknown_quote"), message: "no quote \(id)")))
            }
            quote = record.quote
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
            reply.events = try store.events(after: since, limit: limit).map { Self.wireEvent($0, currency: currency) }
            reply.lastSeq = try store.lastSequence()
        case .ping:
            reply.pong = true
            reply.lastSeq = try store.lastSequence()
        }
        return Engine.ReadReply(reply: reply, quote: quote)
    }

    /// The event as clients see it; `withQuote: false` leaves out a quote event's quote, for
    /// a caller that splices in one it encoded already.
    static func wireEvent(_ event: StoredEvent, currency: Currency, withQuote: Bool = true) -> WireEvent {
        switch event.kind {
        case .quote(let from, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.id.rawValue, from: from?.rawValue,
                to: quote.status.rawValue, quote: withQuote ? WireQuote(quote, currency: currency) : nil)
        case .mechanicBusy(let mechanic, let quote), .mechanicFree(let mechanic, let quote):
            WireEvent(
                seq: event.seq, type: event.type, at: event.at, quoteId: quote.rawValue,
                mechanic: WireQuote.WireMechanic(mechanic))
        }
    }
}
