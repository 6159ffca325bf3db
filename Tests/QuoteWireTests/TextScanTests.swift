import Testing

@testable import QuoteWire

@Suite("Finding where plain string text ends")
struct TextScanTests {
    /// The answer byte by byte, as the specification says it.
    private static func expectedEnd(_ bytes: [UInt8], from start: Int, beyondASCII: Bool) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || (beyondASCII && byte >= 0x7F)
            {
                return index
            }
            index += 1
        }
        return bytes.count
    }

    private static func end(_ bytes: [UInt8], from start: Int, beyondASCII: Bool) -> Int {
        bytes.withUnsafeBufferPointer { TextScan.end(of: $0, from: start, beyondASCII: beyondASCII) }
    }

    @Test(
        "the first special byte is found wherever it lies in a word, whatever follows it",
        arguments: [false, true])
    func everyByteAtEveryOffset(beyondASCII: Bool) {
        var mismatches = 0
        for byte in UInt8.min...UInt8.max {
            // Every length up to three words and a bit, so that the byte lies in a whole
            // word, in the overlapping last word, or in text shorter than a word.
            for length in 1...27 {
                for offset in 0..<length {
                    for start in [0, 1, 3, 9] where start <= offset {
                        // Plain text, the byte, then bytes that could confuse a word-wide test
                        // above it (another hit, a borrow's neighbours).
                        for after: UInt8 in [UInt8(ascii: "a"), 0x00, 0x21, 0xFF, 0x7F, UInt8(ascii: "\"")] {
                            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                            bytes[offset] = byte
                            if offset + 1 < length { bytes[offset + 1] = after }
                            let expected = Self.expectedEnd(bytes, from: start, beyondASCII: beyondASCII)
                            if Self.end(bytes, from: start, beyondASCII: beyondASCII) != expected { mismatches += 1 }
                        }
                    }
                }
            }
        }
        #expect(mismatches == 0)
    }

    @Test("text without a special byte ends at its end, at every length")
    func plainTextRunsToTheEnd() {
        for length in 0..<40 {
            let bytes = [UInt8](repeating: UInt8(ascii: "z"), count: length)
            #expect(Self.end(bytes, from: 0, beyondASCII: true) == length)
            #expect(Self.end(bytes, from: 0, beyondASCII: false) == length)
        }
        let empty: [UInt8] = []
        #expect(Self.end(empty, from: 0, beyondASCII: true) == 0)
    }
}
