/// Finds a catalog entry by name, ignoring case and surrounding spaces (``Catalog/key(_:)``),
/// without making a lowered copy of the name asked for.
///
/// Every service of every submission is looked up by name: a lowered copy and a `String` hash
/// were most of what a look-up cost. An ASCII name is folded and hashed byte by byte as it is
/// read and compared with the keys in place; any other goes through ``Catalog/key(_:)`` and a
/// dictionary, as before.
///
/// A catalog can come from a peer (`applyCatalog`), and the hash has no secret seed: names
/// could be chosen to share slots. So the table is built only while every run of occupied
/// slots stays short (``longestRun``); a catalog that makes a longer one is looked up through
/// the dictionary alone, whose hash is seeded per process. Either way a look-up costs at most
/// a short run of comparisons.
struct NameIndex: Sendable {
    /// Each entry's key, by position.
    private let keys: [String]
    /// Every key: for names that are not plain ASCII, and for every name when ``slots`` is
    /// empty.
    private let byKey: [String: Int]
    /// Open addressing over the ASCII keys' hashes, a quarter full at most: an entry's
    /// position, or -1 for none. Empty when the keys made a run longer than allowed.
    private let slots: [Int32]
    /// Some key is not plain ASCII. Such a key may still equal an ASCII name (Swift compares
    /// text by canonical equivalence: U+037E is `;`), so an ASCII name not in the table is
    /// looked for in ``byKey`` too.
    private let someKeyBeyondASCII: Bool

    /// The longest run of occupied slots a table may have.
    static let longestRun = 32

    /// An index of `keys` (each entry's ``Catalog/key(_:)``, in order, each once), whose
    /// table has no run of occupied slots longer than `longestRun`, or is not used.
    /// `positions` is each key's position in `keys`: the dictionary the catalog built to check
    /// that no two entries share a key, kept rather than built again.
    init(keys: [String], positions: [String: Int], longestRun: Int = NameIndex.longestRun) {
        self.keys = keys
        self.byKey = positions
        var beyondASCII = false
        var size = 16
        while size < keys.count * 4 { size *= 2 }
        var slots = [Int32](repeating: -1, count: size)
        for (position, key) in keys.enumerated() {
            guard let hash = key.withUTF8Bytes({ Self.hash(Self.trimmed($0)) }) else {
                beyondASCII = true
                continue
            }
            var slot = Int(truncatingIfNeeded: hash) & (size - 1)
            var probes = 0
            while slots[slot] >= 0 && probes <= longestRun {
                slot = (slot + 1) & (size - 1)
                probes += 1
            }
            guard probes <= longestRun else {
                slots = []
                break
            }
            slots[slot] = Int32(truncatingIfNeeded: position)
        }
        someKeyBeyondASCII = beyondASCII
        self.slots = Self.runs(in: slots, atMost: longestRun) ? slots : []
    }

    /// Whether `slots` has some and no run of occupied ones, wrapping around, longer than
    /// `longest`.
    private static func runs(in slots: [Int32], atMost longest: Int) -> Bool {
        guard !slots.isEmpty else { return false }
        var run = 0
        // Twice round: a run may wrap past the end.
        for index in 0..<(slots.count * 2) {
            if slots[index % slots.count] >= 0 {
                run += 1
                if run > longest { return false }
            } else {
                run = 0
            }
        }
        return true
    }

    /// Whether ASCII names are looked up in the table (not the dictionary alone).
    var usesTable: Bool { !slots.isEmpty }

    /// The position of the entry whose key is `name`'s key, if any.
    func position(of name: String) -> Int? {
        guard !slots.isEmpty else { return byKey[Catalog.key(name)] }
        let found: Int?? = name.withUTF8Bytes { bytes in
            let trimmed = Self.trimmed(bytes)
            guard let hash = Self.hash(trimmed) else { return nil }
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 {
                let position = Int(slots[slot])
                if keys[position].withUTF8Bytes({ Self.folds(trimmed, to: $0) }) { return .some(position) }
                slot = (slot + 1) & mask
            }
            return .some(nil)
        }
        if let found, found != nil || !someKeyBeyondASCII { return found }
        return byKey[Catalog.key(name)]
    }

    /// Whether `a` and `b` have the same ``Catalog/key(_:)``, and it is not empty.
    static func sameKey(_ a: String, _ b: String) -> Bool {
        let ascii: Bool? = a.withUTF8Bytes { first in
            b.withUTF8Bytes { second in
                let (one, other) = (trimmed(first), trimmed(second))
                guard isASCII(one), isASCII(other) else { return nil }
                guard !one.isEmpty, one.count == other.count else { return false }
                for index in one.indices where fold(one[index]) != fold(other[index]) { return false }
                return true
            }
        }
        if let ascii { return ascii }
        let key = Catalog.key(a)
        return !key.isEmpty && key == Catalog.key(b)
    }

    /// Whether `name` has an empty key: nothing but spaces.
    static func hasEmptyKey(_ name: String) -> Bool {
        name.withUTF8Bytes { trimmed($0).isEmpty }
    }

    /// `bytes` without the spaces around them, as `trimmingPrefixAndSuffixSpaces` trims.
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        var start = 0
        var end = bytes.count
        while start < end && isSpace(bytes[start]) { start += 1 }
        while end > start && isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// A hash of `bytes` with ASCII capitals folded, eight bytes a step (``foldedWord(_:at:)``);
    /// `nil` when a byte is not ASCII.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        var offset = 0
        while offset < bytes.count {
            guard let word = foldedWord(bytes, at: offset) else { return nil }
            let mixed = (hash ^ word) &* 0x9E37_79B9_7F4A_7C15
            hash = mixed ^ (mixed >> 29)
            offset += 8
        }
        return hash
    }

    /// The eight bytes of `bytes` from `offset` (fewer at the end, the rest zero) as one word,
    /// ASCII capitals lowered, all at once; `nil` when one is not ASCII.
    private static func foldedWord(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64? {
        let word = Self.word(bytes, at: offset)
        guard word & ASCIILowering.highs == 0 else { return nil }
        return ASCIILowering.lowered(word)
    }

    /// The eight bytes of `bytes` from `offset` as a little-endian word, zero past the end.
    private static func word(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt64 {
        let remaining = bytes.count - offset
        if remaining >= 8, let base = bytes.baseAddress {
            return UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        var word: UInt64 = 0
        for index in 0..<max(0, min(remaining, 8)) { word |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        return word
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        ASCIILowering.scan(bytes).ascii
    }

    /// `byte`, lowered if it is an ASCII capital.
    private static func fold(_ byte: UInt8) -> UInt8 {
        byte &- 0x41 < 26 ? byte | 0x20 : byte
    }

    /// Whether `name`, folded, is `key` byte for byte (`key` is a folded ASCII key), eight
    /// bytes a step.
    private static func folds(_ name: UnsafeBufferPointer<UInt8>, to key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == key.count else { return false }
        var offset = 0
        while offset < name.count {
            guard foldedWord(name, at: offset) == word(key, at: offset) else { return false }
            offset += 8
        }
        return true
    }
}
