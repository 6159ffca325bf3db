/// Where a plain run of JSON string text ends, found a word at a time: the parser reads and
/// the writer writes every string of every frame, so both scan eight bytes at once (the "has
/// zero byte", "has byte less than" and "has byte greater than" tests, each exact as to whether
/// a word holds such a byte); the first such byte is the lowest flagged in its word. Only the
/// last few bytes, short of a word, are read one by one.
enum TextScan {
    /// The index of the first byte from `start` on that is a quote, a backslash or a control
    /// character, or, with `beyondASCII`, DEL or any byte above it; `bytes.count` if none.
    @inline(__always)
    static func end(of bytes: UnsafeBufferPointer<UInt8>, from start: Int, beyondASCII: Bool) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        let raw = UnsafeRawPointer(base)
        var index = max(start, 0)
        while index &+ 8 <= bytes.count {
            let hits = flagged(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self), beyondASCII: beyondASCII)
            // The lowest flagged byte is exact (a borrow or carry only flags bytes above a
            // hit), so it is the answer: no byte-by-byte pass over the word.
            if hits != 0 { return index &+ (hits.trailingZeroBitCount &>> 3) }
            index &+= 8
        }
        while index < bytes.count {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || (beyondASCII && byte >= 0x7F)
            {
                return index
            }
            index &+= 1
        }
        return index
    }

    /// The high bit of each byte of `word` (read in memory order) that may be special, exact
    /// for the lowest: the bytes above a special one may be flagged too.
    @inline(__always)
    private static func flagged(_ loaded: UInt64, beyondASCII: Bool) -> UInt64 {
        let word = UInt64(littleEndian: loaded)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        var special =
            ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word)
        // DEL becomes 0x80, and every byte above it has its high bit already; a carry into the
        // next byte comes only from 0xFF, itself a hit.
        if beyondASCII { special |= (word &+ ones) | word }
        return special & 0x8080_8080_8080_8080
    }
}
