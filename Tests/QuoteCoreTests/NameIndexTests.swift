import Testing

@testable import QuoteCore

@Suite("Looking a catalog name up")
struct NameIndexTests {
    static let names = (0..<200).map { "Service \($0)" } + ["Tyre Check\u{37E}", "\u{212A}elvin", "Équilibrage"]

    /// The index of ``names``, as a catalog of them builds it.
    static func index(longestRun: Int) -> NameIndex {
        let keys = names.map(Catalog.key)
        return NameIndex(
            keys: keys, positions: Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }),
            longestRun: longestRun)
    }

    @Test("a table whose runs would be too long is not used, and every name is still found", arguments: [0, 32])
    func tableOrDictionary(longestRun: Int) {
        let index = Self.index(longestRun: longestRun)
        #expect(index.usesTable == (longestRun > 0))
        for (position, name) in Self.names.enumerated() {
            #expect(index.position(of: name) == position, "\(name)")
            #expect(index.position(of: "  \(name.uppercased()) ") == position, "\(name)")
        }
        #expect(index.position(of: "Service 200") == nil)
        #expect(index.position(of: "") == nil)
    }

    @Test(
        "only capitals fold, whatever a name's length and wherever a letter falls in it",
        arguments: [1, 7, 8, 9, 15, 16, 17, 24])
    func foldingAtEveryOffset(length: Int) {
        // The bytes beside the capitals (`@` before `A`, `[` after `Z`) and beside the small
        // letters (`` ` `` and `{`): a fold of a whole word at once must change none of them.
        let alphabet = Array("@AZ[`az{09 -M".utf8)
        var names: [String] = []
        var seen: Set<String> = []
        for start in alphabet.indices {
            let name = String(
                decoding: (0..<length).map { alphabet[(start + $0 * 5) % alphabet.count] }, as: UTF8.self)
            // One name for each key, none blank: as a catalog holds them.
            if !Catalog.key(name).isEmpty, seen.insert(Catalog.key(name)).inserted { names.append(name) }
        }
        #expect(names.count >= 8)
        let keys = names.map(Catalog.key)
        let index = NameIndex(
            keys: keys, positions: Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) }))
        #expect(index.usesTable)
        for (position, name) in names.enumerated() {
            #expect(index.position(of: name) == position, "\(name)")
            #expect(index.position(of: name.uppercased()) == position, "\(name)")
            #expect(index.position(of: name.lowercased()) == position, "\(name)")
            // The neighbours of the letters are not letters: swapped for them, no name matches.
            let shifted = String(
                decoding: name.utf8.map { $0 == UInt8(ascii: "@") ? UInt8(ascii: "`") : $0 }, as: UTF8.self)
            if shifted != name { #expect(index.position(of: shifted) != position, "\(shifted)") }
        }
    }

    @Test(
        "a name is found by any text Swift holds equal to its key, ASCII or not",
        arguments: [("tyre check;", 200), ("TYRE CHECK\u{37E}", 200), ("kelvin", 201), ("\u{212A}ELVIN", 201)])
    func canonicalEquivalence(asked: String, position: Int) {
        for longestRun in [0, 32] {
            let index = Self.index(longestRun: longestRun)
            #expect(index.position(of: asked) == position)
        }
    }

    @Test("names are the same service exactly when their keys are equal and not empty")
    func sameKey() {
        let pairs = [
            ("Oil Change", " oil change\t", true), ("Tyre Check;", "tyre check\u{37E}", true),
            ("\u{212A}elvin", "KELVIN", true), ("Oil Change", "Oil Changes", false), (" ", "", false),
            ("\u{00A0}", "\u{00A0}", true),
        ]
        for (a, b, same) in pairs {
            #expect(NameIndex.sameKey(a, b) == same, "\(a) / \(b)")
            #expect(NameIndex.sameKey(a, b) == (!Catalog.key(a).isEmpty && Catalog.key(a) == Catalog.key(b)))
        }
    }

    @Test("a character beyond ASCII anywhere in a name, short or long, is compared as Swift compares it")
    func beyondASCIIAnywhere() {
        for length in 1...20 {
            let plain = String(repeating: "k", count: length)
            for index in 0..<length {
                // KELVIN SIGN: its key is an ASCII `k`, in three bytes.
                var characters = Array(plain)
                characters[index] = "\u{212A}"
                let kelvin = String(characters)
                characters[index] = "é"
                let accented = String(characters)
                #expect(NameIndex.sameKey(kelvin, plain), "\(length), \(index)")
                #expect(!NameIndex.sameKey(accented, plain), "\(length), \(index)")
                #expect(NameIndex.sameKey(accented, accented.uppercased()), "\(length), \(index)")
            }
        }
    }
}
