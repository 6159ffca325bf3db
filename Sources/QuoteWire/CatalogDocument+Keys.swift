import Foundation
import QuoteCore

extension CatalogDocument {
    /// The keys of a catalog object and of its entries, as `docs/schema/definitions.schema.json`
    /// lists them: any other is refused, as at the top level of a request.
    static let keys: [String: Set<String>] = [
        "": ["currency", "services", "mechanics", "coupons"],
        "services": ["name", "minimumSkill", "price", "priceCents"],
        "mechanics": ["id", "name", "skill"],
        "coupons": ["code", "percentOff", "amountOff", "expires"],
    ]

    /// The most characters a string of a catalog sent on the wire (a key or a value) may have,
    /// counted as written: a UTF-8 character or an escape (`\n`, `\u00e9`) is one, a surrogate
    /// pair two. Twice the longest text a catalog holds (`QuoteLimits.maximumTextLength`).
    static let maximumStringLength = 2 * QuoteLimits.maximumTextLength

    /// The length of the longest string in `json`, in characters as written (see
    /// ``maximumStringLength``); one pass, whatever the text.
    static func longestString(in json: [UInt8]) -> Int {
        var longest = 0
        var length: Int?
        // Within an escape, counted at its backslash: the byte after it, then for `\u` four
        // hex digits more, are passed over.
        var afterBackslash = false
        var hexDigits = 0
        for byte in json {
            guard var counted = length else {
                if byte == UInt8(ascii: "\"") { length = 0 }
                continue
            }
            if afterBackslash {
                afterBackslash = false
                if byte == UInt8(ascii: "u") { hexDigits = 4 }
                continue
            }
            if hexDigits > 0 {
                hexDigits -= 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\\"):
                counted += 1
                afterBackslash = true
            case UInt8(ascii: "\""):
                longest = max(longest, counted)
                length = nil
                continue
            case 0x80...0xBF:
                break  // A UTF-8 continuation byte: its character is counted.
            default:
                counted += 1
            }
            length = counted
        }
        return max(longest, length ?? 0)
    }

    /// The path of the first key in `json`, a catalog object, that a catalog does not have:
    /// `catalog.services[2].colour`; `nil` when there is none.
    static func firstUnknownKey(in json: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
        if let key = object.keys.sorted().first(where: { !(keys[""] ?? []).contains($0) }) { return "catalog.\(key)" }
        for list in ["services", "mechanics", "coupons"] {
            let allowed = keys[list] ?? []
            for (index, entry) in ((object[list] as? [[String: Any]]) ?? []).enumerated() {
                if let key = entry.keys.sorted().first(where: { !allowed.contains($0) }) {
                    return "catalog.\(list)[\(index)].\(key)"
                }
            }
        }
        return nil
    }
}
