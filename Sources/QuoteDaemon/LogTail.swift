import Foundation
import Logging
import QuoteStore
import QuoteWire
import Synchronization
import Threads

/// Reads what other daemons commit to a shared store, so that this daemon publishes the whole
/// stream: a subscriber connected to any one daemon misses nothing.
///
/// It reads the log after the last event it knows of whenever woken: by the store's hint that
/// another process appended (PostgreSQL's `LISTEN`), by the I/O thread when its own commit
/// came after a number it has not seen, and every `pollInterval` in case a hint was lost.
/// What it reads it encodes and hands to the I/O thread (a byte on a pipe the thread polls
/// says so), which puts it in order with its own commits (``EventOutbox``). While no one is
/// connected to receive events (``listen(_:)``), it reads none: woken, it only asks whether
/// the catalog changed, and reads on from what was published once someone connects.
final class LogTail: Sendable {
    /// Events read from the log after `after`, encoded as they are published.
    struct Delivery: Sendable {
        var after: Int64
        var events: [PublishedEvent]
    }

    private struct State {
        var deliveries: [Delivery] = []
        /// The last `seq` read.
        var cursor: Int64
        /// The last `seq` read before rows that could not be read were skipped, until the next
        /// delivery says it follows this one: the publishing order then skips them too.
        var skippedAfter: Int64?
        /// The store failed at the last read (logged once until it works again).
        var failing = false
        /// The log's last `seq` when last looked at with no one listening, until the I/O thread
        /// takes it: every number through it may take its turn unseen.
        var idleThrough: Int64?
        /// When the log was last looked at with no one listening.
        var idleChecked: ContinuousClock.Instant?
        /// No one listened at some wake since the last read: the catalog may have changed in
        /// what was never read.
        var idleSinceRead = false
        /// What was read and is not known to be published yet: each page's last `seq` and its
        /// encoded bytes, oldest first.
        var unpublished: [(through: Int64, bytes: Int)] = []

        /// The bytes read and not published through `seq` yet.
        mutating func unpublishedBytes(after seq: Int64) -> Int {
            unpublished.removeAll { $0.through <= seq }
            return unpublished.reduce(0) { $0 + $1.bytes }
        }
    }

    /// How often, at most, the store is asked about its catalog and its last number while no
    /// one listens.
    static let idleCheckInterval: Duration = .milliseconds(250)

    /// Events read per statement.
    static let pageSize = 1_000
    /// How far reading may run ahead of publishing, in events and in encoded bytes: those
    /// read wait for the I/O thread, or in ``PublishOrder`` for an earlier one.
    static let readAhead: Int64 = 20_000
    /// How far reading may run ahead of publishing in encoded bytes (past one page).
    static let readAheadBytes = 32 << 20

    private let store: any QuoteStore
    private let encode: @Sendable ([StoredEvent]) -> [PublishedEvent]
    private let observe: @Sendable ([StoredEvent]) async -> Void
    private let checkCatalog: @Sendable () async -> Void
    private let pollInterval: Duration
    private let logger: Logger
    private let state: Mutex<State>
    /// The loop ends on cancellation: cancelling wakes it.
    private let wakeup = Wakeup(wakesOnCancel: true)
    /// The last `seq` the I/O thread published.
    private let published: Atomic<Int64>
    /// Whether someone may receive events (``listen(_:)``): if not, none is read.
    private let listening: Atomic<Bool>
    /// Readable while a delivery waits to be taken.
    var readyDescriptor: Int32 { ready.readDescriptor }
    private let ready: WakePipe

    /// A tail of `store`'s log after `lastSeq`, encoding each page read with `encode`, after
    /// `observe` has seen it, while someone is `listening`; while no one is, a wake calls
    /// `checkCatalog` instead, at most every ``idleCheckInterval`` (another daemon may have
    /// changed the catalog: `observe` would have seen it in the log).
    init(
        store: any QuoteStore, after lastSeq: Int64, pollInterval: Duration = .milliseconds(250),
        logger: Logger, listening: Bool = true, observe: @escaping @Sendable ([StoredEvent]) async -> Void = { _ in },
        checkCatalog: @escaping @Sendable () async -> Void = {},
        encode: @escaping @Sendable ([StoredEvent]) -> [PublishedEvent]
    ) throws {
        self.listening = Atomic(listening)
        self.checkCatalog = checkCatalog
        ready = try WakePipe()
        self.store = store
        self.encode = encode
        self.observe = observe
        self.pollInterval = pollInterval
        self.logger = logger
        state = Mutex(State(cursor: lastSeq))
        published = Atomic(lastSeq)
    }

    /// Reads whenever woken, until cancelled.
    func run() async {
        // Not awaited at the end: a store may not give up waiting for its server at once.
        let watch = Task { await self.store.watchAppends { self.wake() } }
        defer { watch.cancel() }
        await withDiscardingTaskGroup { group in
            group.addTask {
                while (try? await Task.sleep(for: self.pollInterval)) != nil { self.wake() }
            }
            while !Task.isCancelled {
                await wakeup.wait()
                await read()
            }
            group.cancelAll()
        }
    }

    /// Asks for a read of the log; from any thread.
    func wake() {
        wakeup.signal()
    }

    /// Says, from the I/O thread, whether someone may receive events: while no one may, the
    /// log is not read.
    func listen(_ listening: Bool) {
        self.listening.store(listening, ordering: .relaxed)
        if listening { wake() }
    }

    /// Records, from the I/O thread, that everything up to `seq` is published.
    func published(through seq: Int64) {
        published.store(seq, ordering: .relaxed)
    }

    /// What was read and not taken yet, oldest first (on the I/O thread).
    func take() -> [Delivery] {
        ready.drain()
        return state.withLock { state in
            defer { state.deliveries = [] }
            return state.deliveries
        }
    }

    /// The log's last number when last looked at with no one listening, not taken yet (on the
    /// I/O thread, after ``take()``): every number through it may pass unseen if still no one
    /// listens.
    func takeIdleThrough() -> Int64? {
        state.withLock { state in
            defer { state.idleThrough = nil }
            return state.idleThrough
        }
    }

    /// With no one listening: at most every ``idleCheckInterval``, asks whether the catalog
    /// changed, and hands over the log's last number.
    private func idle() async {
        let now = ContinuousClock.now
        let due = state.withLock { state in
            state.idleSinceRead = true
            guard state.idleChecked.map({ now - $0 >= Self.idleCheckInterval }) ?? true else { return false }
            state.idleChecked = now
            return true
        }
        guard due else { return }
        await checkCatalog()
        // A failure here costs nothing but a later look: the read, once someone listens, says.
        guard let last = try? await store.lastSequence() else { return }
        state.withLock { $0.idleThrough = max($0.idleThrough ?? last, last) }
        ready.signal()
    }

    /// Reads the log after the last event known, page by page, and hands it over; with no one
    /// to receive it, only whether the catalog changed.
    private func read() async {
        guard listening.load(ordering: .relaxed) else { return await idle() }
        let (start, wasIdle) = state.withLock { state in
            defer { state.idleSinceRead = false }
            return (state.cursor, state.idleSinceRead)
        }
        // Numbers passed unseen may have changed the catalog after it was last asked about.
        if wasIdle { await checkCatalog() }
        var cursor = max(start, published.load(ordering: .relaxed))
        // After a page that could not be read, the events of one page are read one at a time,
        // to find the row at fault.
        var oneByOne = 0
        do throws(StoreError) {
            while listening.load(ordering: .relaxed), cursor - published.load(ordering: .relaxed) < Self.readAhead,
                state.withLock({ $0.unpublishedBytes(after: published.load(ordering: .relaxed)) }) < Self.readAheadBytes
            {
                let events: [StoredEvent]
                do {
                    events = try await store.events(after: cursor, limit: oneByOne > 0 ? 1 : Self.pageSize)
                } catch  where error.code == .corrupt && cursor < .max {
                    guard oneByOne > 0 else {
                        oneByOne = Self.pageSize
                        continue
                    }
                    // A row this daemon cannot read (another's of a newer version, or damaged):
                    // waiting for it would hold everything after it, this daemon's own events
                    // included, for good. It is skipped, as a pruned one is: the next delivery
                    // says it follows the last event read before it.
                    let before = cursor
                    cursor += 1
                    oneByOne = 0
                    state.withLock { state in
                        state.skippedAfter = state.skippedAfter ?? before
                        state.cursor = cursor
                    }
                    logger.error(
                        "the event after this one in the log cannot be read; it is not published live, those after it are",
                        metadata: ["seq": "\(before)", "error": "\(error.message)"])
                    continue
                }
                oneByOne = max(oneByOne - 1, 0)
                guard let last = events.last else { break }
                await observe(events)
                let encoded = encode(events)
                let after = cursor
                cursor = last.seq
                let bytes = encoded.reduce(0) { $0 + $1.byteCount }
                state.withLock { state in
                    state.deliveries.append(Delivery(after: state.skippedAfter ?? after, events: encoded))
                    state.unpublished.append((cursor, bytes))
                    state.skippedAfter = nil
                    state.cursor = cursor
                }
                ready.signal()
                if events.count < Self.pageSize && oneByOne == 0 { break }
            }
            let recovered = state.withLock { state in
                defer { state.failing = false }
                return state.failing
            }
            if recovered { logger.notice("reading other daemons' events again") }
        } catch {
            // Cancelled (the daemon stopping): not a failure of the store.
            guard !Task.isCancelled else { return }
            let first = state.withLock { state in
                defer { state.failing = true }
                return !state.failing
            }
            if first {
                logger.warning(
                    "cannot read other daemons' events; retrying", metadata: ["error": "\(error.message)"])
            }
        }
    }
}
