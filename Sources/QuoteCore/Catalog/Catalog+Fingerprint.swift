import Foundation

extension Catalog {
    /// A short, stable name for this catalog's content (16 hex digits): equal for two catalogs
    /// with the same currency, services, mechanics and coupons in the same order, different
    /// otherwise (but for a 64-bit hash collision). Several daemons compare theirs to know
    /// they price and dispatch alike.
    public var fingerprint: String {
        var text = "currency \(currency.code)\n"
        for service in services {
            text += "service \(service.name)\t\(service.minimumSkill.rawValue)\t\(service.price.cents)\n"
        }
        for mechanic in mechanics {
            text += "mechanic \(mechanic.id.rawValue)\t\(mechanic.name)\t\(mechanic.skill.rawValue)\n"
        }
        for coupon in coupons {
            let discount =
                switch coupon.discount {
                case .percent(let percent): "\(percent)%"
                case .amount(let amount): "\(amount.cents)c"
                }
            let expiry =
                coupon.expiresAt.map { "\(Int64(clampingFinite: ($0.timeIntervalSince1970 * 1000).rounded()))" } ?? "-"
            text += "coupon \(coupon.code)\t\(discount)\t\(expiry)\n"
        }
        // FNV-1a, 64 bits: stable across runs and machines, unlike `Hasher`.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
