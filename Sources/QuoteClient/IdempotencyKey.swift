public import Foundation

/// Idempotency keys that are cheap for quoted to index: UUIDs of version 7 (RFC 9562), whose
/// first 48 bits are the time in milliseconds and the rest random.
///
/// quoted keeps every key in a unique index. A random key (a version 4 UUID) lands anywhere in
/// it, so each new quote rewrites an index page of its own in every commit: under load, a
/// daemon fed random keys reaches about half the throughput it has with ordered ones
/// (`docs/benchmarks.md`). Keys made in the same millisecond land side by side instead, at the
/// index's end; with 74 random bits in each millisecond, they are as unlikely to meet as
/// version 4 UUIDs.
public enum IdempotencyKey {
    /// A new key for a submission made at `date`: a version 7 UUID, in lowercase.
    public static func make(at date: Date = Date()) -> String {
        var random = SystemRandomNumberGenerator()
        return make(at: date, using: &random)
    }

    /// A new key for a submission made at `date`, its random bits from `random`.
    public static func make(at date: Date = Date(), using random: inout some RandomNumberGenerator) -> String {
        let milliseconds = date.timeIntervalSince1970 * 1_000
        // 48 bits reach the year 10889; a clock outside that range (or not a number) yields 0,
        // which still makes a valid, unique key.
        let time =
            milliseconds.isFinite && milliseconds >= 0 && milliseconds < 0x1_0000_0000_0000
            ? UInt64(milliseconds) : 0
        let high = time << 16 | 0x7000 | UInt64.random(in: 0...0x0FFF, using: &random)
        let low = 0x8000_0000_0000_0000 | UInt64.random(in: 0...0x3FFF_FFFF_FFFF_FFFF, using: &random)
        return text(high, low)
    }

    /// `high` and `low` as a UUID's text, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase.
    private static func text(_ high: UInt64, _ low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? high : low
                let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble % 16))) & 0xF
                buffer[index] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                index += 1
            }
            return index
        }
    }
}
