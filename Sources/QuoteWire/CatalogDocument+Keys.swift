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

    /// The most bytes a string of a catalog sent on the wire (a key or a value, as written,
    /// escapes included) may have: four for each character of the longest text a catalog may
    /// hold (`QuoteLimits.maximumTextLength`).
    static let maximumStringBytes = 4 * QuoteLimits.maximumTextLength

    /// The length in bytes of the longest string in `json`, as written between its quotes; one
    /// pass, whatever the text.
    static func longestString(in json: [UInt8]) -> Int {
        var longest = 0
        var start: Int?
        var escaped = false
        for (index, byte) in json.enumerated() {
            guard let opened = start else {
                if byte == UInt8(ascii: "\"") { start = index + 1 }
                continue
            }
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                longest = max(longest, index - opened)
                start = nil
            }
        }
        if let opened = start { longest = max(longest, json.count - opened) }
        return longest
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
