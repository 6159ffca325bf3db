extension String {
    /// The same text as `lowercased()`, made without Unicode's tables when it is ASCII, and
    /// not copied at all when it has no capital letter.
    ///
    /// Service names and customers' addresses and names are lowered for every submission, to
    /// look them up and to store their search keys; they are nearly always ASCII, and
    /// addresses are nearly always lowercase already. Both the scan and the copy go eight
    /// bytes at a time.
    var asciiFastLowercased: String {
        let (ascii, capitals) = withUTF8Bytes(ASCIILowering.scan)
        guard ascii else { return lowercased() }
        guard capitals else { return self }
        return withUTF8Bytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count) { lowered in
                ASCIILowering.lower(bytes, into: lowered)
                return bytes.count
            }
        }
    }
}

/// ASCII case folding a word (eight bytes) at a time. A text of eight bytes or more is read
/// in whole words, the last one overlapping the one before; a shorter one byte by byte.
enum ASCIILowering {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    /// The high bit of every byte of a word: set in a byte that is not ASCII.
    static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether `bytes` are all ASCII, and whether any is a capital letter (`A` to `Z`).
    @inline(__always)
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (ascii: Bool, capitals: Bool) {
        guard let base = bytes.baseAddress else { return (true, false) }
        let count = bytes.count
        guard count >= 8 else {
            var capitals = false
            for byte in bytes {
                if byte >= 0x80 { return (false, false) }
                if byte &- 0x41 < 26 { capitals = true }
            }
            return (true, capitals)
        }
        let raw = UnsafeRawPointer(base)
        var beyond: UInt64 = 0
        var capitals: UInt64 = 0
        var offset = 0
        while true {
            // The last word ends at the last byte, overlapping the one before if need be.
            let start = min(offset, count &- 8)
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            beyond |= word
            capitals |= capitalBits(word)
            offset = start &+ 8
            if offset >= count { break }
        }
        // A byte at 0x80 or above may flag capitals wrongly, but the text is then not ASCII.
        return (beyond & highs == 0, capitals != 0)
    }

    /// The high bit of each byte of `word` that is a capital letter, exact when every byte is
    /// ASCII: adding `0x80 - 0x41` sets the high bit from `A` up, adding `0x80 - 0x5B` from
    /// past `Z` up, and neither carries out of a byte below 0x80.
    @inline(__always)
    private static func capitalBits(_ word: UInt64) -> UInt64 {
        (word &+ ones &* (0x80 - 0x41)) & ~(word &+ ones &* (0x80 - 0x5B)) & highs
    }

    /// `word`, all ASCII, with each capital letter lowered: a capital's high bit, moved down
    /// to 0x20, is the bit that lowers it.
    @inline(__always)
    static func lowered(_ word: UInt64) -> UInt64 {
        word | (capitalBits(word) &>> 2)
    }

    /// Writes `bytes`, all ASCII, into `target` (as many bytes), each capital letter lowered.
    @inline(__always)
    static func lower(_ bytes: UnsafeBufferPointer<UInt8>, into target: UnsafeMutableBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, let targetBase = target.baseAddress else { return }
        let count = bytes.count
        guard count >= 8 else {
            for index in 0..<count {
                let byte = base[index]
                targetBase[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
            }
            return
        }
        let raw = UnsafeRawPointer(base)
        let out = UnsafeMutableRawPointer(targetBase)
        var offset = 0
        while true {
            let start = min(offset, count &- 8)
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            out.storeBytes(of: lowered(word).littleEndian, toByteOffset: start, as: UInt64.self)
            offset = start &+ 8
            if offset >= count { break }
        }
    }
}
