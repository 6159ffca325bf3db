/// What text quoted accepts from a request or a catalog: no control characters (C0, DEL, C1),
/// no bidirectional overrides or isolates, and a value made only of spaces or invisible
/// characters counts as missing. Such text would otherwise reach a support agent's terminal
/// (`quotectl get`, `watch`) and the logs, where it can clear the screen or forge lines.
public enum TextHygiene {
    /// Whether `scalar` is refused in any text field: C0 controls (tab and newline
    /// included), DEL, C1 controls, and the bidirectional embeddings, overrides and
    /// isolates (U+202A–U+202E, U+2066–U+2069).
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The first forbidden scalar in `text`, if any.
    public static func firstForbidden(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first(where: isForbidden)
    }

    /// How a forbidden scalar is named in a refusal: `U+001B`.
    public static func name(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Whether `scalar` shows nothing: spaces of every width, and the invisible characters
    /// (soft hyphen, zero-width space and joiners, word joiner, variation selectors, byte-order
    /// mark, Hangul fillers, braille blank). An explicit list, the one the schema's
    /// `visibleText` pattern states, so that quoted and its contract agree on every character.
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x20, 0x7F...0xA0, 0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x1680, 0x17B4, 0x17B5, 0x180B...0x180F,
            0x2000...0x200F, 0x2028, 0x2029, 0x202F, 0x205F...0x2064, 0x206A...0x206F, 0x2800, 0x3000, 0x3164,
            0xFE00...0xFE0F, 0xFEFF, 0xFFA0, 0xFFF9...0xFFFB:
            true
        default: false
        }
    }
}

extension String {
    /// Whether the first and last bytes are visible ASCII: then the text is neither
    /// ``isBlank`` nor changed by `trimmingPrefixAndSuffixSpaces()`, known from two bytes
    /// (every field of every submission is checked for both).
    var hasVisibleASCIIEnds: Bool {
        withUTF8Bytes { bytes in
            guard let first = bytes.first, let last = bytes.last else { return false }
            return first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F
        }
    }

    /// Whether the text has nothing a person can see: empty, spaces only, or invisible
    /// characters only. Such a value counts as missing.
    public var isBlank: Bool {
        // Plain ASCII first, over the contiguous bytes: the first visible one usually decides.
        let ascii: Bool? = withUTF8Bytes { bytes in
            for byte in bytes {
                if byte >= 0x80 { return nil }
                if byte > 0x20 && byte != 0x7F { return false }
            }
            return true
        }
        if let ascii { return ascii }
        return unicodeScalars.allSatisfy(TextHygiene.isInvisible)
    }
}
