import Foundation
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteWire

/// The middle stage of a batch, where the store is used: one transaction for all the batch's
/// writes (group commit) through the ``Rulebook``, then its reads, answered from committed
/// state. It returns domain values only; the I/O thread writes every byte of JSON.
struct StoreStage: Sendable {
    let store: any QuoteStore
    let logger: Logger
    let metrics: DaemonMetrics
    let rulebook = Rulebook()
    /// The most rows one read request may load: as many as can fit in a reply
    /// (``DaemonConfiguration/maxReplyBytes``, none smaller than 512 bytes), so that the
    /// store's work per request is bounded whatever `limit` asks.
    var maximumRows: Int = 1_024

    /// What a read came to.
    enum ReadResult: Sendable {
        case quote(QuoteRecord)
        case quotes([Quote], limit: Int)
        case mechanics([MechanicState])
        case services([Service])
        case stats(StoreState)
        /// The wait-list in line order; `truncated` when fewer rows were read than asked for.
        case waiting([Quote], truncated: Bool)
        /// Events after a `seq`; `truncated` when fewer rows were read than asked for, to
        /// bound the work of one request.
        case events([StoredEvent], lastSeq: Int64, truncated: Bool)
        /// The store answered with its last `seq`, or failed with the message.
        case pong(Result<Int64, StoreError>)
        /// A retried submission's answer, as a write's would be.
        case written(Result<CommandOutcome, QuoteError>)
        case failure(WireError)
    }

    func execute(_ batch: Engine.Batch) async -> Engine.Executed {
        var executed = Engine.Executed(batch: batch, writeResults: [], readResults: [])
        var commit: Duration?
        defer { metrics.batch(size: batch.count, commit: commit) }
        if !batch.writes.isEmpty {
            let requests = batch.writes.map { write -> CheckedRequest in
                guard case .write(let command) = write.pending.work else { preconditionFailure("writes only") }
                return CheckedRequest(command, by: write.pending.actor)
            }
            let started = ContinuousClock.now
            do {
                executed.writeResults = try await rulebook.apply(
                    requests: requests, catalog: batch.catalog, to: store)
                commit = .now - started
            } catch {
                metrics.storeFailed()
                logger.error(
                    "store failed; batch not applied", metadata: ["error": "\(error)", "commands": "\(requests.count)"])
                executed.writeResults = nil
            }
        }
        executed.readResults.reserveCapacity(batch.reads.count)
        // `stats` scans the store: read once for the whole batch, however many ask.
        var stats: StoreState?
        for read in batch.reads {
            do {
                if case .read(.stats) = read.pending.work {
                    let state: StoreState
                    if let stats {
                        state = stats
                    } else {
                        state = try await StoreState.read(from: store)
                    }
                    stats = state
                    executed.readResults.append(.stats(state))
                    continue
                }
                executed.readResults.append(
                    try await answer(read.pending.work, by: read.pending.actor, catalog: batch.catalog))
            } catch {
                metrics.storeFailed()
                logger.error("store read failed", metadata: ["error": "\(error)"])
                executed.readResults.append(
                    .failure(WireError(code: .storageError, message: "the store could not be read; retry")))
            }
        }
        return executed
    }

    private func answer(_ work: Engine.Work, by actor: Actor, catalog: Catalog) async throws(StoreError)
        -> ReadResult
    {
        switch work {
        case .write: preconditionFailure("only reads are answered here")
        case .replay(let key, let digest, let refusal):
            return .written(
                try await rulebook.replay(
                    idempotencyKey: key, digest: digest, refusal: refusal, from: store, by: actor))
        case .read(let query):
            switch query {
            case .get(let id):
                guard let record = try await store.quote(id), actor.reaches(record.quote) else {
                    return .failure(WireError(QuoteError(.unknownQuote, "no quote \(id)")))
                }
                return .quote(record)
            case .list(let status, let after, let limit):
                let rows = min(limit, maximumRows)
                return .quotes(try await store.quotes(status: status, afterID: after, limit: rows), limit: rows)
            case .mechanics(let freeOnly, let skill):
                return .mechanics(
                    try await store.mechanics().filter { state in
                        (!freeOnly || state.isFree) && (skill.map { state.mechanic.skill == $0 } ?? true)
                    })
            case .services:
                return .services(catalog.services)
            case .stats:
                return .stats(try await StoreState.read(from: store))
            case .waiting(let limit):
                let rows = min(limit, maximumRows)
                let quotes = try await store.waitingQuotes(limit: rows)
                return .waiting(quotes, truncated: rows < limit && quotes.count == rows)
            case .events(let since, let limit):
                let rows = min(limit, maximumRows)
                let events = try await store.events(after: since, limit: rows)
                return .events(
                    events, lastSeq: try await store.lastSequence(), truncated: rows < limit && events.count == rows)
            case .ping:
                do {
                    return .pong(.success(try await store.lastSequence()))
                } catch {
                    metrics.storeFailed()
                    return .pong(.failure(error))
                }
            }
        }
    }
}
