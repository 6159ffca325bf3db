import Foundation
import QuoteWire

/// What one daemon's `stats` reply counts of its own work: the batches it committed and its
/// requests by latency bucket, from receipt to the reply being sent. Two readings around a run
/// subtract into the run's own, which sets the daemon's share of a latency apart from the load
/// generator's and the network's.
struct DaemonActivity {
    /// Batches committed (a group commit each, when they write).
    var batches: Int64
    /// The buckets' upper bounds, in microseconds; `requests` has one more count, beyond the last.
    var bounds: [Int64]
    /// Requests of every operation but `stats` and `ping` (the benchmark's own), by bucket.
    var requests: [Int64]

    /// Reads `activity` from a `stats` reply, decoded as every client decodes it
    /// (`WireReply.Activity`).
    init(statsReply reply: [UInt8]) throws {
        guard let activity = try? WireCodec().decode(WireReply.self, from: reply).activity else {
            throw BenchError("quoted's stats reply has no activity")
        }
        batches = activity.batches
        bounds = activity.latencyBoundsMicroseconds
        var requests = [Int64](repeating: 0, count: bounds.count + 1)
        for (operation, counts) in activity.latency where operation != "stats" && operation != "ping" {
            for (index, count) in counts.enumerated() where index < requests.count {
                requests[index] += count
            }
        }
        self.requests = requests
    }

    /// What happened between `earlier` and this reading.
    func since(_ earlier: DaemonActivity) -> DaemonActivity { combined(with: earlier, by: -) }

    /// Adds another daemon's run.
    func adding(_ other: DaemonActivity) -> DaemonActivity { combined(with: other, by: +) }

    /// Each count combined with `other`'s by `operation` (requests only when both readings
    /// have the same buckets).
    private func combined(with other: DaemonActivity, by operation: (Int64, Int64) -> Int64) -> DaemonActivity {
        var result = self
        result.batches = operation(batches, other.batches)
        if other.requests.count == requests.count {
            result.requests = zip(requests, other.requests).map(operation)
        }
        return result
    }

    /// The share of requests answered within each bound, cumulative, up to the first that
    /// holds them all: "3.7% <= 0.5 ms, 62.5% <= 1 ms, ...", or `nil` when none were counted.
    var cumulativeShares: String? {
        let total = requests.reduce(0, +)
        guard total > 0 else { return nil }
        var parts: [String] = []
        var within: Int64 = 0
        for (bound, count) in zip(bounds, requests) {
            within += count
            guard within > 0 else { continue }
            // Two decimals near the top, where a tail's tenth of a percent decides a p99.
            let share = Double(within) / Double(total) * 100
            let format = within < total && share >= 99 ? "%.2f%% <= %@ ms" : "%.1f%% <= %@ ms"
            parts.append(String(format: format, min(share, within < total ? 99.99 : 100), Self.milliseconds(bound)))
            if within == total { break }
        }
        if within < total { parts.append("the rest beyond") }
        return parts.joined(separator: ", ")
    }

    private static func milliseconds(_ microseconds: Int64) -> String {
        microseconds % 1_000 == 0 ? "\(microseconds / 1_000)" : String(format: "%g", Double(microseconds) / 1_000)
    }
}
