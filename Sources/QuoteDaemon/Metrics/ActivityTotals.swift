import Foundation
import QuoteWire

/// What the daemon counted since it started, for `stats` (`WireReply.Activity`): requests by
/// operation and outcome, latency buckets by operation, events, batches and store errors.
/// Plain counts, updated once per batch under ``DaemonMetrics``' lock.
struct ActivityTotals: Sendable {
    /// Operations by their place in ``DaemonMetrics/operations``.
    var succeeded: [Int64]
    var failed: [[WireError.Code: Int64]]
    /// Per operation, one count per bucket of ``DaemonMetrics/durationBounds`` and one more.
    var latency: [[Int64]]
    var eventsPublished: Int64 = 0
    var batches: Int64 = 0
    var storeErrors: Int64 = 0

    init(operations: Int, buckets: Int) {
        succeeded = Array(repeating: 0, count: operations)
        failed = Array(repeating: [:], count: operations)
        latency = Array(repeating: Array(repeating: 0, count: buckets + 1), count: operations)
    }

    /// The wire form: only operations that were asked for.
    func wire(startedAt: Date, uptime: Duration, labels: [String], bounds: [Duration]) -> WireReply.Activity {
        var requests: [String: [String: Int64]] = [:]
        var latency: [String: [Int64]] = [:]
        for index in labels.indices where succeeded[index] > 0 || !failed[index].isEmpty {
            var codes = Dictionary(uniqueKeysWithValues: failed[index].map { ($0.key.rawValue, $0.value) })
            if succeeded[index] > 0 { codes["ok"] = succeeded[index] }
            requests[labels[index]] = codes
            latency[labels[index]] = self.latency[index]
        }
        return WireReply.Activity(
            startedAt: startedAt, uptimeMilliseconds: DaemonMetrics.nanoseconds(uptime) / 1_000_000, requests: requests,
            latencyBoundsMicroseconds: bounds.map { DaemonMetrics.nanoseconds($0) / 1_000 }, latency: latency,
            eventsPublished: eventsPublished, batches: batches, storeErrors: storeErrors)
    }
}
