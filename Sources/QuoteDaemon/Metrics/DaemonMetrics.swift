public import CoreMetrics
import Foundation
import QuoteCore
import QuoteStore
import QuoteWire
import Synchronization

/// What the daemon measures, through swift-metrics (whichever backend the executable picked;
/// none costs next to nothing) and in the totals `stats` reports:
///
/// - `quoted_requests_total{op,code}` (counter): requests answered, `code` being `ok` or the
///   error code, `op` `unknown` when the request named no operation that exists;
/// - `quoted_request_duration_seconds{op}` (histogram): from receipt to the reply being sent;
/// - `quoted_batch_size` (histogram): requests per store transaction (group commit);
/// - `quoted_commit_duration_seconds` (histogram): a batch's write transaction, commit
///   included;
/// - `quoted_events_published_total` (counter): events that took their turn on the events
///   socket, sent, or passed over while nothing was connected to it (with several daemons,
///   other daemons' numbers never read included); `quoted_last_event_seq` (gauge);
/// - `quoted_store_errors_total` (counter): store operations that failed;
/// - `quoted_store_failovers_total` (counter): times the store moved to another database server
///   (PostgreSQL with a promoted standby); `quoted_store_down_seconds_total` (counter): seconds
///   with no server accepting writes, over every loss ended or under way (both at each scrape);
/// - `quoted_quotes{state}`, `quoted_mechanics{status="busy"|"free"|"off_duty"}`,
///   `quoted_waiting_quotes`, `quoted_oldest_wait_seconds` (gauges, read from the store by
///   ``refreshStoreGauges(from:)``, at each scrape).
///
/// The I/O thread and the store loop report once per batch, not per request: one lock, and
/// one counter increment per operation and outcome seen. The duration histogram still takes
/// one observation per request, after the batch's replies are sent.
public final class DaemonMetrics: Sendable {
    /// The bucket bounds of both duration histograms, which `stats` reports too, so that
    /// `quotectl top` and a dashboard read the same distribution.
    public static let durationBounds: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2_500),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]
    /// The bucket bounds of `quoted_batch_size`.
    public static let batchSizeBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 2_048, 4_096, 10_000]

    /// The metrics' names, for a backend that configures them (histogram buckets).
    public enum Name {
        public static let requests = "quoted_requests_total"
        public static let requestDuration = "quoted_request_duration_seconds"
        public static let batchSize = "quoted_batch_size"
        public static let commitDuration = "quoted_commit_duration_seconds"
        public static let quotes = "quoted_quotes"
        public static let mechanics = "quoted_mechanics"
        public static let waitingQuotes = "quoted_waiting_quotes"
        public static let oldestWait = "quoted_oldest_wait_seconds"
        public static let eventsPublished = "quoted_events_published_total"
        public static let lastEventSeq = "quoted_last_event_seq"
        public static let storeErrors = "quoted_store_errors_total"
        public static let storeFailovers = "quoted_store_failovers_total"
        public static let storeDownSeconds = "quoted_store_down_seconds_total"
    }

    /// The `op` labels, by an operation's place: every operation, then `unknown`.
    static let operations: [QuoteWire.Operation?] = QuoteWire.Operation.allCases + [nil]
    static let labels = operations.map { $0?.rawValue ?? "unknown" }
    private static let index: [QuoteWire.Operation: Int] = Dictionary(
        uniqueKeysWithValues: QuoteWire.Operation.allCases.enumerated().map { ($0.element, $0.offset) })
    private static let boundNanoseconds = durationBounds.map(nanoseconds)

    private struct State {
        var totals: ActivityTotals
        /// `quoted_requests_total` by operation and error code, made when first seen.
        var failures: [[WireError.Code: Counter]]
    }

    private let factory: any MetricsFactory
    private let state: Mutex<State>
    private let successes: [Counter]
    private let durations: [CoreMetrics.Timer]
    private let batchSize: Recorder
    private let commitDuration: CoreMetrics.Timer
    private let storeErrors: Counter
    private let eventsPublished: Counter
    private let lastEventSeq: Gauge
    let quotes: [QuoteStatus: Gauge]
    let mechanicsBusy: Gauge
    let mechanicsFree: Gauge
    let mechanicsOffDuty: Gauge
    let waitingQuotes: Gauge
    let oldestWait: Gauge
    let storeFailovers: Counter
    let storeDownSeconds: FloatingPointCounter
    /// The store's availability as last reported, so that each scrape adds only what is new.
    let reportedAvailability = Mutex(StoreAvailability())
    /// When the daemon started, for `stats`.
    let startedAt = Date()
    private let started = ContinuousClock.now

    /// Metrics made through `factory`; `NOOPMetricsHandler.instance` when nothing collects
    /// them (the totals `stats` reports are kept either way).
    public init(factory: any MetricsFactory) {
        self.factory = factory
        successes = Self.labels.map {
            Counter(label: Name.requests, dimensions: [("op", $0), ("code", "ok")], factory: factory)
        }
        durations = Self.labels.map {
            CoreMetrics.Timer(label: Name.requestDuration, dimensions: [("op", $0)], factory: factory)
        }
        batchSize = Recorder(label: Name.batchSize, aggregate: true, factory: factory)
        commitDuration = CoreMetrics.Timer(label: Name.commitDuration, factory: factory)
        storeErrors = Counter(label: Name.storeErrors, factory: factory)
        eventsPublished = Counter(label: Name.eventsPublished, factory: factory)
        lastEventSeq = Gauge(label: Name.lastEventSeq, factory: factory)
        quotes = Dictionary(
            uniqueKeysWithValues: QuoteStatus.allCases.map {
                ($0, Gauge(label: Name.quotes, dimensions: [("state", $0.rawValue)], factory: factory))
            })
        mechanicsBusy = Gauge(label: Name.mechanics, dimensions: [("status", "busy")], factory: factory)
        mechanicsFree = Gauge(label: Name.mechanics, dimensions: [("status", "free")], factory: factory)
        mechanicsOffDuty = Gauge(label: Name.mechanics, dimensions: [("status", "off_duty")], factory: factory)
        waitingQuotes = Gauge(label: Name.waitingQuotes, factory: factory)
        oldestWait = Gauge(label: Name.oldestWait, factory: factory)
        storeFailovers = Counter(label: Name.storeFailovers, factory: factory)
        storeDownSeconds = FloatingPointCounter(label: Name.storeDownSeconds, factory: factory)
        state = Mutex(
            State(
                totals: ActivityTotals(operations: Self.labels.count, buckets: Self.durationBounds.count),
                failures: Array(repeating: [:], count: Self.labels.count)))
    }

    /// Metrics that go nowhere; `stats` still counts.
    public static func unexported() -> DaemonMetrics { DaemonMetrics(factory: NOOPMetricsHandler.instance) }

    static func index(of op: QuoteWire.Operation?) -> Int { op.flatMap { index[$0] } ?? operations.count - 1 }

    /// Counts a batch's answered requests, whose replies were sent at `sent` (I/O thread).
    func answered(_ tickets: [RequestTicket], at sent: ContinuousClock.Instant) {
        var succeeded = [Int64](repeating: 0, count: Self.labels.count)
        var failed: [(index: Int, code: WireError.Code)] = []
        var observations: [(index: Int, nanoseconds: Int64)] = []
        observations.reserveCapacity(tickets.count)
        // The daemon's own work (received nowhere) is not counted.
        for ticket in tickets {
            guard let received = ticket.received else { continue }
            let index = Self.index(of: ticket.op)
            if let code = ticket.code { failed.append((index, code)) } else { succeeded[index] += 1 }
            observations.append((index, Self.nanoseconds(sent - received)))
        }
        guard !observations.isEmpty else { return }
        // Decide inside the lock; counters made and incremented after it.
        let (newCodes, known) = state.withLock { state in
            for index in succeeded.indices { state.totals.succeeded[index] += succeeded[index] }
            var newCodes: [(index: Int, code: WireError.Code)] = []
            var known: [(Counter, Int64)] = []
            var tally: [Int: [WireError.Code: Int64]] = [:]
            for (index, code) in failed { tally[index, default: [:]][code, default: 0] += 1 }
            for (index, codes) in tally {
                for (code, count) in codes {
                    state.totals.failed[index][code, default: 0] += count
                    if let counter = state.failures[index][code] {
                        known.append((counter, count))
                    } else {
                        newCodes.append((index, code))
                    }
                }
            }
            for (index, nanoseconds) in observations {
                state.totals.latency[index][Self.bucket(nanoseconds)] += 1
            }
            return (newCodes, known)
        }
        for index in succeeded.indices where succeeded[index] > 0 { successes[index].increment(by: succeeded[index]) }
        for (counter, count) in known { counter.increment(by: count) }
        for (index, code) in newCodes {
            let counter = Counter(
                label: Name.requests, dimensions: [("op", Self.labels[index]), ("code", code.rawValue)],
                factory: factory)
            let count = failed.count { $0.index == index && $0.code == code }
            counter.increment(by: count)
            state.withLock { $0.failures[index][code] = counter }
        }
        for (index, nanoseconds) in observations { durations[index].recordNanoseconds(nanoseconds) }
    }

    /// Counts a batch of `size` requests whose writes took `commit` (store loop); `nil` when
    /// it had no writes.
    func batch(size: Int, commit: Duration?) {
        state.withLock { $0.totals.batches += 1 }
        batchSize.record(size)
        if let commit { commitDuration.recordNanoseconds(Self.nanoseconds(commit)) }
    }

    /// Counts a store operation that failed.
    func storeFailed() {
        state.withLock { $0.totals.storeErrors += 1 }
        storeErrors.increment()
    }

    /// Counts `count` events published, the last of them numbered `lastSeq` (I/O thread).
    func published(_ count: Int, lastSeq: Int64) {
        guard count > 0 else { return }
        state.withLock { $0.totals.eventsPublished += Int64(count) }
        eventsPublished.increment(by: count)
        lastEventSeq.record(lastSeq)
    }

    /// The last `seq` the daemon knows of, at start-up.
    func starting(lastSeq: Int64) {
        lastEventSeq.record(lastSeq)
    }

    /// What `stats` reports of this daemon.
    func activity() -> WireReply.Activity {
        let totals = state.withLock { $0.totals }
        return totals.wire(
            startedAt: startedAt, uptime: .now - started, labels: Self.labels, bounds: Self.durationBounds)
    }

    private static func bucket(_ nanoseconds: Int64) -> Int {
        var low = 0
        var high = boundNanoseconds.count
        while low < high {
            let middle = (low + high) / 2
            if boundNanoseconds[middle] < nanoseconds { low = middle + 1 } else { high = middle }
        }
        return low
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
