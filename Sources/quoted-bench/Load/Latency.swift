import Foundation
import Histogram

/// Latencies in nanoseconds, kept in an HdrHistogram (3 significant digits, up to 5 minutes).
struct Latency: Sendable {
    private(set) var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1_000, highestTrackableValue: 300_000_000_000, numberOfSignificantValueDigits: .three)

    /// Records one latency; values beyond the range count as the range's top.
    mutating func record(nanoseconds: UInt64) {
        _ = histogram.record(min(max(nanoseconds, 1_000), 300_000_000_000))
    }

    /// Adds another thread's recordings.
    mutating func add(_ other: Latency) {
        histogram.add(other.histogram)
    }

    var count: UInt64 { histogram.totalCount }

    /// The value at `percentile` (0–100), in milliseconds.
    func milliseconds(at percentile: Double) -> Double {
        Double(histogram.valueAtPercentile(percentile)) / 1e6
    }

    var maxMilliseconds: Double { Double(histogram.max) / 1e6 }

    /// `p50 p90 p99 p99.9 max`, in milliseconds, or dashes when nothing was recorded.
    var summary: [String] {
        guard count > 0 else { return Array(repeating: "-", count: 5) }
        return [50, 90, 99, 99.9].map { Self.format(milliseconds(at: $0)) } + [Self.format(maxMilliseconds)]
    }

    static func format(_ milliseconds: Double) -> String {
        milliseconds >= 100 ? String(format: "%.0f", milliseconds) : String(format: "%.2f", milliseconds)
    }
}
