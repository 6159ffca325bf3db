/// Text made safe for a terminal: every character that could move the cursor, clear the
/// screen, start a new line, ring the bell or reorder what is shown (C0 and C1 controls,
/// DEL, bidirectional overrides and isolates, line and paragraph separators) is written as a
/// visible `\uXXXX` escape instead. Defence in depth: the daemon refuses such characters in
/// what it stores, but quotectl may read an older store, another daemon, or a peer in the
/// middle. `\uXXXX` is also a valid JSON escape, so a JSON line stays valid JSON.
enum Printable {
    /// `text` with every unsafe character escaped; with `keepingColour`, quotectl's own
    /// colour sequences (`ESC [ digits ; ... m`, which only change colour) are kept.
    static func escaped(_ text: String, keepingColour: Bool = false) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.contains(where: isUnsafe) else { return text }
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if keepingColour, scalar == "\u{1B}", let end = colourEnd(scalars, from: index) {
                result.append(contentsOf: scalars[index...end])
                index = end + 1
                continue
            }
            if isUnsafe(scalar) {
                let hex = String(scalar.value, radix: 16)
                let padded = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                result.append(contentsOf: ("\\u" + padded).unicodeScalars)
            } else {
                result.append(scalar)
            }
            index += 1
        }
        return String(result)
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
            true
        default: false
        }
    }

    /// The colours quotectl itself writes (`Output.styled`): reset, bold, dim, and the
    /// foreground colours of the states. Nothing else passes, so data cannot hide text
    /// (`ESC[8m`) or paint it black on black.
    static let colours: Set<String> = ["0", "1", "2", "31", "32", "33", "35", "36", "1;32"]

    /// Where a colour sequence starting at `start` (an ESC) ends, if it is one of
    /// ``colours``: `ESC [`, the code, then `m`.
    private static func colourEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        guard start + 2 < scalars.count, scalars[start + 1] == "[" else { return nil }
        var index = start + 2
        var code = ""
        while index < scalars.count, index - start <= 8, scalars[index] == ";" || ("0"..."9").contains(scalars[index]) {
            code.unicodeScalars.append(scalars[index])
            index += 1
        }
        guard index < scalars.count, scalars[index] == "m", colours.contains(code) else { return nil }
        return index
    }
}
