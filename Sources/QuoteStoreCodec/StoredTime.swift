package import Foundation
import QuoteCore

/// Times as both stores write them: whole milliseconds since 1970, so that what is read back
/// is exactly what was written.
package enum StoredTime {
    /// The milliseconds of years 1 to 9999: any time a store writes. Within it, a time read
    /// back as a `Date` and written again is the same number; a stored time outside it is
    /// corrupt.
    package static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date` in whole milliseconds since 1970, rounded, saturating far outside any real date.
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64(clampingFinite: (date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date `milliseconds` after 1970.
    package static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }
}

extension Duration {
    /// Whole milliseconds, rounded down, saturating at the bounds of `Int64`: for settings
    /// and cut-offs the stores write as numbers.
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, past) = ms.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if past { return seconds < 0 ? .min : .max }
        return sum
    }
}
