import Foundation
public import Logging
import QuoteCore
public import QuoteRules
public import QuoteStore
import Synchronization
import Threads

/// The middle stage, where the store is used: it commits one `RequestBatch` after another,
/// all of a batch's writes in one transaction (group commit) through the `Rulebook`, then
/// answers its reads from committed state, and returns domain values only
/// (`CommittedBatch`); the I/O thread writes every byte.
///
/// The batch being received lives here, behind a `Mutex`: the I/O thread decodes each request
/// into it as it arrives (``receive(_:)``) while ``run()`` commits the batch before; when that
/// commit is done, the loop swaps the received batch out and starts on it at once, so that it
/// never waits for the I/O thread. Committed batches queue up, in order, for the I/O thread to
/// take (``takeCommitted()``); a byte on a `WakePipe` (`Threads`) whose read end, ``readyDescriptor``, the
/// I/O thread polls beside its sockets says there is something to take. No socket ever comes
/// here. `Ticket` is whatever the receiving side needs to answer a request; it is carried,
/// never read.
public final class BatchCommitter<Ticket: Sendable>: Sendable {
    private struct State {
        /// Requests received and decoded, for the store's next transaction.
        var next: RequestBatch<Ticket>
        /// Committed batches, oldest first, waiting to be answered.
        var done: [CommittedBatch<Ticket>] = []
        /// Since when the loop, committing a batch, has waited for the store's answer to one
        /// call (the batch began, or the store last answered); `nil` while it waits for work.
        var committingSince: ContinuousClock.Instant?
        var stopping = false
    }

    private let state: Mutex<State>
    /// Wakes the loop when a batch begins, or to stop. Not on cancellation: the loop ends
    /// only by ``stop()``, once every received request is committed.
    private let wakeup = Wakeup(wakesOnCancel: false)
    private let store: any QuoteStore
    private let catalog: LiveCatalog
    private let logger: Logger
    private let metrics: DaemonMetrics
    private let rulebook = Rulebook()
    /// The ticket of the daemon's own requests, answered to no one.
    private let daemonTicket: Ticket
    private let maxBatch: Int
    /// Page reads per batch: their replies' encoding, on the I/O thread, stays bounded.
    private let maxPageReads: Int
    /// The most rows one read request may load: as many as can fit in a reply, so that the
    /// store's work per request is bounded whatever `limit` asks.
    private let maximumRows: Int
    private let ready: WakePipe
    /// The size of the batch last committed: the room a new batch is begun with, so that
    /// its arrays do not grow request by request.
    private let lastBatchSize = Atomic<Int>(0)

    /// Readable while a committed batch waits to be taken, or when a full batch was taken and
    /// there is room to receive again.
    var readyDescriptor: Int32 { ready.readDescriptor }

    /// A committer of batches of at most `maxBatch` requests (and `maxPageReads` page reads)
    /// into `store`, each begun empty against `catalog`'s catalog of that moment; a read loads
    /// at most `maximumRows` rows. The daemon's own requests carry `daemonTicket`.
    public init(
        store: any QuoteStore, catalog: LiveCatalog, logger: Logger, metrics: DaemonMetrics = .unexported(),
        maxBatch: Int = .max, maxPageReads: Int = .max, maximumRows: Int = 1_024, daemonTicket: Ticket
    ) throws {
        ready = try WakePipe()
        self.store = store
        self.catalog = catalog
        self.logger = logger
        self.metrics = metrics
        self.maxBatch = max(1, maxBatch)
        self.maxPageReads = max(1, maxPageReads)
        self.maximumRows = max(1, maximumRows)
        self.daemonTicket = daemonTicket
        state = Mutex(State(next: RequestBatch(catalog: catalog.current)))
    }

    /// An empty batch against the catalog of this moment.
    public func newBatch() -> RequestBatch<Ticket> {
        RequestBatch(catalog: catalog.current, capacity: min(lastBatchSize.load(ordering: .relaxed), maxBatch))
    }

    // MARK: Committing

    /// Applies `batch`'s writes in one transaction, then answers its reads. A store that
    /// fails applies nothing, unless it failed while committing (`writesMayHaveApplied`):
    /// every write's result is then missing (`writeResults` is `nil`).
    public func commit(_ received: consuming RequestBatch<Ticket>) async -> CommittedBatch<Ticket> {
        // Handed over, not shared: the replies are written into the arrays its requests came in.
        let batch = received
        // The batch's catalog, or the one its writes put in force: what its reads answer from.
        var inForce = batch.catalog
        var writeResults: [Result<CommandOutcome, QuoteError>]? = []
        var writesMayHaveApplied = false
        var commit: Duration?
        // Once a read found the store unreachable in this batch, its other reads are answered
        // so at once: each would wait as long again for the same server, and the batch's
        // replies with them. (A write refused as `unavailable` may only lack a standby's
        // confirmation: reads go on then.)
        var unreachable: StoreError?
        defer { metrics.batch(size: batch.count, commit: commit) }
        lastBatchSize.store(batch.count, ordering: .relaxed)
        if !batch.writeRequests.isEmpty {
            let requests = batch.writeRequests
            let started = ContinuousClock.now
            do {
                let applied = try await applyRetrying(requests, catalog: inForce)
                answered()
                writeResults = applied.results
                commit = .now - started
                // In force before the replies go: a client told of the change finds it.
                if let newer = applied.catalog {
                    adopt(newer)
                    inForce = newer
                }
            } catch {
                answered()
                metrics.storeFailed()
                writesMayHaveApplied = error.outcomeUnknown
                logger.error(
                    error.outcomeUnknown
                        ? "store failed while committing; batch may be applied" : "store failed; batch not applied",
                    metadata: ["error": "\(error)", "commands": "\(requests.count)"])
                writeResults = nil
            }
        }
        var readResults: [QueryAnswer] = []
        readResults.reserveCapacity(batch.reads.count)
        // `stats` scans the store: read once for the whole batch, however many ask.
        var stats: QueryAnswer?
        for read in batch.reads {
            if case .query(.stats) = read.request.kind, let stats {
                readResults.append(stats)
                continue
            }
            if let unreachable {
                if case .query(.ping) = read.request.kind {
                    readResults.append(.pong(.failure(unreachable)))
                } else {
                    readResults.append(.storeFailed)
                }
                continue
            }
            do {
                defer { answered() }
                let answer = try await rulebook.answer(
                    read.request, catalog: inForce, from: store, maximumRows: maximumRows)
                switch answer {
                case .stats: stats = answer
                case .pong(.failure(let error)):
                    metrics.storeFailed()
                    if error.code == .unavailable { unreachable = error }
                default: break
                }
                readResults.append(answer)
            } catch {
                metrics.storeFailed()
                logger.error("store read failed", metadata: ["error": "\(error)"])
                if error.code == .unavailable { unreachable = error }
                readResults.append(.storeFailed)
            }
        }
        return CommittedBatch(
            batch: batch, writeResults: writeResults, readResults: readResults,
            writesMayHaveApplied: writesMayHaveApplied)
    }

    /// Applies `requests`; on a shared store, a transaction rolled back by a conflict with
    /// another daemon's (a deadlock) is run again, a few times: it applied nothing.
    private func applyRetrying(
        _ requests: [CheckedRequest], catalog: Catalog
    ) async throws(StoreError) -> (results: [Result<CommandOutcome, QuoteError>], catalog: Catalog?) {
        var attempt = 1
        while true {
            do {
                return try await rulebook.applyBatch(requests: requests, catalog: catalog, to: store)
            } catch  where error.code == .busy && !error.outcomeUnknown && store.isShared && attempt < 4 {
                logger.notice(
                    "batch rolled back by a conflict with another daemon's transaction; again",
                    metadata: ["attempt": "\(attempt)", "error": "\(error.message)"])
                // The store answered this attempt: the stall limit counts from the next.
                answered()
                // Apart, so that the two do not meet again at once.
                try? await Task.sleep(for: .milliseconds(Int.random(in: 1...20) * attempt))
                attempt += 1
            }
        }
    }

    // MARK: The loop

    /// Commits batches until ``stop()`` has been called and every received request is
    /// committed.
    func run() async {
        while true {
            let (job, stop) = state.withLock { state -> (RequestBatch<Ticket>?, Bool) in
                guard state.next.isEmpty else {
                    // An empty placeholder: `receive` begins the next batch with its first
                    // request, against the catalog and time of then.
                    var job = RequestBatch<Ticket>(catalog: state.next.catalog, started: state.next.started)
                    swap(&job, &state.next)
                    state.committingSince = .now
                    return (job, false)
                }
                return (nil, state.stopping)
            }
            if let job {
                // A full batch kept the I/O thread from receiving: tell it there is room.
                if !hasRoom(job) { ready.signal() }
                let committed = await commit(job)
                state.withLock { state in
                    state.done.append(committed)
                    state.committingSince = nil
                }
                ready.signal()
            } else if stop {
                return
            } else {
                await wakeup.wait()
            }
        }
    }

    /// Puts `catalog` in force if it is newer than the one in force: for the batches begun
    /// from now on, and for the requests still to come in the batch being received.
    func adopt(_ catalog: Catalog) {
        guard self.catalog.advance(to: catalog) else { return }
        state.withLock { $0.next.adopt(catalog) }
        logger.notice(
            "catalog in force", metadata: ["version": "\(catalog.version)", "mechanics": "\(catalog.mechanics.count)"])
    }

    /// Lets `receive` add to the batch being received (on the I/O thread: it decodes into
    /// it), waking the loop if it waits for work. Returns whether that batch has room for
    /// more.
    func receive(_ receive: (inout RequestBatch<Ticket>) -> Void) -> Bool {
        let (room, began) = state.withLock { state in
            let began = state.next.isEmpty
            // A batch begins now, against the catalog and the time of now, however long it
            // waited empty.
            if began { state.next = newBatch() }
            receive(&state.next)
            return (hasRoom(state.next), began && !state.next.isEmpty)
        }
        // The loop waits only for an empty batch to begin: later requests find it busy.
        if began { wakeup.signal() }
        return room
    }

    /// Adds `command` to the batch being received, from any thread, answered to no one: its
    /// events are published like any others (the daemon's own work, such as serving the
    /// wait-list after a reload).
    func enqueue(_ command: CheckedCommand) {
        _ = receive { [daemonTicket] in $0.append(daemonTicket, write: CheckedRequest(command, by: .daemon)) }
    }

    /// Whether the batch being received has room for more requests.
    var hasRoom: Bool { state.withLock { hasRoom($0.next) } }

    private func hasRoom(_ batch: RequestBatch<Ticket>) -> Bool {
        batch.count < maxBatch && batch.pageReads < maxPageReads
    }

    /// Whether every received request has been committed and taken.
    var isDrained: Bool { state.withLock { $0.next.isEmpty && $0.committingSince == nil && $0.done.isEmpty } }

    /// Since when the loop has waited for the store's answer to one call of the batch in hand
    /// (its transaction, or one of its reads); `nil` while it waits for work. What tells a
    /// store loop that is stuck from one that is idle or slow but moving.
    var committingSince: ContinuousClock.Instant? { state.withLock { $0.committingSince } }

    /// The committed batches not yet taken, oldest first.
    func takeCommitted() -> [CommittedBatch<Ticket>] {
        ready.drain()
        return state.withLock { state in
            let done = state.done
            state.done = []
            return done
        }
    }

    /// The store answered a call of the batch in hand: the wait for the next starts now.
    private func answered() {
        state.withLock { state in
            if state.committingSince != nil { state.committingSince = .now }
        }
    }

    /// Lets ``run()`` return once every received request is committed.
    func stop() {
        state.withLock { $0.stopping = true }
        wakeup.signal()
    }
}
