import Foundation
import Testing

@testable import QuoteWire

@Suite("A codec's cache of dates written")
struct DateCacheTests {
    @Test("a date is written the same from the cache as without it, whichever dates came before")
    func cachedDatesAreTheDatesAsked() {
        let cache = DateCache()
        // Dates a millisecond apart or a day, and dates within one millisecond (found by their
        // millisecond, then by their bits), in an order that reuses each of the last two and
        // evicts the older for a third.
        let base = Date(timeIntervalSince1970: 1_764_374_400.123)
        let offsets = [0, 0.0004, 0, 0.0004, 0.001, 0, 86_400, 0.001, 0.0004, 0, 0.001, 86_400.002, 86_400, 0]
        let dates = offsets.map { base + $0 }
        for date in dates {
            var cached = JSONWriter(dates: cache)
            cached.date(date)
            var plain = JSONWriter()
            plain.date(date)
            #expect(cached.bytes == plain.bytes, "\(date)")
            #expect(String(decoding: plain.bytes, as: UTF8.self) == "\"\(WireCodec.timeText(date))\"")
        }
    }
}
