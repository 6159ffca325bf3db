extension String {
    /// The same text as `lowercased()`, made without Unicode's tables when it is ASCII, and
    /// not copied at all when it has no capital letter.
    ///
    /// Service names and customers' addresses and names are lowered for every submission, to
    /// look them up and to store their search keys; they are nearly always ASCII, and
    /// addresses are nearly always lowercase already.
    var asciiFastLowercased: String {
        var capitals = false
        let ascii = withUTF8Bytes { bytes in
            for byte in bytes {
                if byte >= 0x80 { return false }
                if byte &- 0x41 < 26 { capitals = true }
            }
            return true
        }
        guard ascii else { return lowercased() }
        guard capitals else { return self }
        return withUTF8Bytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count) { lowered in
                for index in bytes.indices {
                    let byte = bytes[index]
                    lowered[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                }
                return bytes.count
            }
        }
    }
}
