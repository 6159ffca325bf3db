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
