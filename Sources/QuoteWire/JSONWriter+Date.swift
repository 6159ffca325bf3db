import Bytes
import Foundation

extension JSONWriter {
    /// Writes `value` as RFC 3339 in UTC with milliseconds (`2026-11-23T02:40:00.123Z`),
    /// exactly as `WireCodec.timeFormat` does, by arithmetic: the format style took longer
    /// than the rest of a quote's JSON together.
    mutating func date(_ value: Date) {
        // The same moment as one written lately, to the bit: its text, with no arithmetic.
        let bits = value.timeIntervalSinceReferenceDate.bitPattern
        if let text = dates?.text(bits: bits) {
            separator()
            output.append(text)
            return
        }
        // Whole milliseconds, truncated as the format style truncates.
        let interval = value.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 200_000_000_000 else {
            string(value.formatted(WireCodec.timeFormat))
            return
        }
        let milliseconds = Int64((interval * 1_000).rounded(.down))
        if let text = dates?.text(milliseconds, bits: bits) {
            separator()
            output.append(text)
            return
        }
        let (days, millisecondOfDay) = Self.floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = Self.civil(fromDays: days)
        guard (0...9_999).contains(year) else {
            string(value.formatted(WireCodec.timeFormat))
            return
        }
        separator()
        let start = output.count
        defer { dates?.remember(milliseconds, bits: bits, output.bytes(from: start)) }
        output.append(UInt8(ascii: "\""))
        output.appendFixed(UInt64(year), width: 4)
        output.append(UInt8(ascii: "-"))
        output.appendFixed(UInt64(month), width: 2)
        output.append(UInt8(ascii: "-"))
        output.appendFixed(UInt64(day), width: 2)
        output.append(UInt8(ascii: "T"))
        output.appendFixed(UInt64(millisecondOfDay / 3_600_000), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendFixed(UInt64(millisecondOfDay / 60_000 % 60), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendFixed(UInt64(millisecondOfDay / 1_000 % 60), width: 2)
        output.append(UInt8(ascii: "."))
        output.appendFixed(UInt64(millisecondOfDay % 1_000), width: 3)
        output.append(UInt8(ascii: "Z"), UInt8(ascii: "\""))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    /// Year, month and day of the day `days` after 1970-01-01 in the proleptic Gregorian
    /// calendar (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
