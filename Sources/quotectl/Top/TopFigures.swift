import Foundation
import QuoteWire

/// One `quotectl top` frame's figures: rates and latency percentiles over the interval between
/// two `stats` replies (as Prometheus takes them from two scrapes), and the store's state
/// from the later one. Also what `top --json` prints.
struct TopFigures: Encodable, Equatable {
    /// One operation's row.
    struct Row: Encodable, Equatable {
        var op: String
        var perSecond: Double
        var errorsPerSecond: Double
        /// Median and 99th percentile latency in milliseconds, receipt to reply; `nil` when no
        /// request was answered in the interval.
        var p50Milliseconds: Double?
        var p99Milliseconds: Double?
    }

    var endpoint: String
    var at: Date
    /// The seconds the rates are taken over.
    var intervalSeconds: Double
    var uptimeSeconds: Double
    var requestsPerSecond: Double
    var operations: [Row]
    /// Errors per second by code.
    var errors: [String: Double]
    var quotes: [String: Int]
    var mechanicsBusy: Int
    var mechanicsFree: Int
    var mechanicsOffDuty: Int
    var waiting: Int
    var oldestWaitSeconds: Double?
    var eventsPerSecond: Double
    var lastSeq: Int64

    /// The figures between `earlier` and `later`, two `stats` answers of the same daemon;
    /// without `earlier` (or when the daemon restarted in between) since the daemon started.
    init(endpoint: String, earlier: WireReply.Activity?, later reply: Reply.Stats, at: Date = Date()) {
        let now = reply.activity
        // Counters that went down mean a restart: count from zero.
        let before = earlier.flatMap { earlier in
            now.map { $0.uptimeMilliseconds >= earlier.uptimeMilliseconds } == true ? earlier : nil
        }
        let interval = max(
            0.001, Double((now?.uptimeMilliseconds ?? 0) - (before?.uptimeMilliseconds ?? 0)) / 1_000)
        self.endpoint = endpoint
        self.at = at
        intervalSeconds = interval
        uptimeSeconds = Double(now?.uptimeMilliseconds ?? 0) / 1_000
        var rows: [Row] = []
        var errors: [String: Double] = [:]
        for (op, codes) in (now?.requests ?? [:]).sorted(by: { $0.key < $1.key }) {
            let previous = before?.requests[op] ?? [:]
            var total: Int64 = 0
            var failed: Int64 = 0
            for (code, count) in codes {
                let delta = count - (previous[code] ?? 0)
                total += delta
                if code != "ok" {
                    failed += delta
                    if delta > 0 { errors[code, default: 0] += Double(delta) / interval }
                }
            }
            let buckets = Self.difference(now?.latency[op], before?.latency[op])
            let bounds = now?.latencyBoundsMicroseconds ?? []
            rows.append(
                Row(
                    op: op, perSecond: Double(total) / interval, errorsPerSecond: Double(failed) / interval,
                    p50Milliseconds: Self.quantile(0.5, buckets: buckets, boundsMicroseconds: bounds),
                    p99Milliseconds: Self.quantile(0.99, buckets: buckets, boundsMicroseconds: bounds)))
        }
        operations = rows
        requestsPerSecond = rows.reduce(0) { $0 + $1.perSecond }
        self.errors = errors
        quotes = reply.counts
        mechanicsBusy = reply.mechanicCounts["busy"] ?? 0
        mechanicsFree = reply.mechanicCounts["free"] ?? 0
        mechanicsOffDuty = reply.mechanicCounts["offDuty"] ?? 0
        waiting = reply.counts["waiting"] ?? 0
        oldestWaitSeconds = reply.oldestWaitMilliseconds.map { Double($0) / 1_000 }
        eventsPerSecond = Double((now?.eventsPublished ?? 0) - (before?.eventsPublished ?? 0)) / interval
        lastSeq = reply.lastSeq
    }

    private static func difference(_ later: [Int64]?, _ earlier: [Int64]?) -> [Int64] {
        guard let later else { return [] }
        guard let earlier, earlier.count == later.count else { return later }
        return zip(later, earlier).map { max(0, $0 - $1) }
    }

    /// The `q` quantile of a bucketed distribution, interpolated linearly inside its bucket as
    /// Prometheus' `histogram_quantile` does; in the unbounded last bucket, the last bound.
    static func quantile(_ q: Double, buckets: [Int64], boundsMicroseconds bounds: [Int64]) -> Double? {
        let total = buckets.reduce(0, +)
        guard total > 0, buckets.count == bounds.count + 1 else { return nil }
        let rank = q * Double(total)
        var below: Int64 = 0
        for (index, count) in buckets.enumerated() {
            guard Double(below + count) >= rank, count > 0 else {
                below += count
                continue
            }
            guard index < bounds.count else { return Double(bounds.last ?? 0) / 1_000 }
            let lower = index == 0 ? 0 : Double(bounds[index - 1])
            let upper = Double(bounds[index])
            let within = (rank - Double(below)) / Double(count)
            return (lower + (upper - lower) * within) / 1_000
        }
        return Double(bounds.last ?? 0) / 1_000
    }
}
