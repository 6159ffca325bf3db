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

    /// Whether `scalar` shows nothing: white space of any kind, and the format characters
    /// (zero-width space and joiners, word joiner, byte-order mark, soft hyphen, marks).
    static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return true }
        switch scalar.properties.generalCategory {
        case .format, .control, .unassigned, .privateUse, .surrogate: return true
        default: break
        }
        switch scalar.value {
        case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800: return true  // Hangul fillers, braille blank
        default: return false
        }
    }
}

extension String {
    /// Whether the text has nothing a person can see: empty, spaces only, or invisible
    /// characters only. Such a value counts as missing.
    public var isBlank: Bool {
        // Plain ASCII first, over the contiguous bytes: the first visible one usually decides.
        var text = self
        let ascii: Bool? = text.withUTF8 { bytes in
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
