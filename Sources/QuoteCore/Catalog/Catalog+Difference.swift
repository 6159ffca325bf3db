import Foundation

extension Catalog: Hashable {
    /// Equal when version, currency and every entry, in order, are equal.
    public static func == (lhs: Catalog, rhs: Catalog) -> Bool {
        lhs.version == rhs.version && lhs.currency == rhs.currency && lhs.services == rhs.services
            && lhs.mechanics == rhs.mechanics && lhs.coupons == rhs.coupons
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(services.count)
        hasher.combine(mechanics.count)
        hasher.combine(coupons.count)
    }
}

extension Catalog {
    /// What putting `other` in force in place of this catalog changes, entry by entry: what
    /// `quotectl catalog apply --dry-run` shows, and what a daemon says when its file and its
    /// store disagree.
    public func difference(to other: Catalog) -> [String] {
        var lines: [String] = []
        if currency != other.currency { lines.append("currency: \(currency) -> \(other.currency)") }
        func compare<Entry>(
            _ what: String, _ old: [Entry], _ new: [Entry], key: (Entry) -> String, describe: (Entry) -> String
        ) {
            let before = Dictionary(old.map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
            let after = Dictionary(new.map { (key($0), $0) }, uniquingKeysWith: { first, _ in first })
            for entry in new {
                guard let previous = before[key(entry)] else {
                    lines.append("+ \(what) \(describe(entry))")
                    continue
                }
                if describe(previous) != describe(entry) {
                    lines.append("~ \(what) \(describe(previous)) -> \(describe(entry))")
                }
            }
            for entry in old where after[key(entry)] == nil { lines.append("- \(what) \(describe(entry))") }
        }
        compare(
            "service", services, other.services, key: { Catalog.key($0.name) },
            describe: { "\($0.name) (\($0.minimumSkill.name), \($0.price))" })
        compare(
            "mechanic", mechanics, other.mechanics, key: { String($0.id.rawValue) },
            describe: { "#\($0.id) \($0.name) (\($0.skill.name))" })
        compare(
            "coupon", coupons, other.coupons, key: { Catalog.key($0.code) },
            describe: { coupon in
                let discount =
                    switch coupon.discount {
                    case .percent(let percent): "\(percent)% off"
                    case .amount(let amount): "\(amount) off"
                    }
                return "\(coupon.code) (\(discount)\(coupon.expiresAt.map { ", until \($0)" } ?? ""))"
            })
        return lines
    }
}

extension CatalogDocument {
    /// `catalog` as a document: what `quotectl catalog show` prints and `catalog apply` reads.
    public init(_ catalog: Catalog) {
        self.init(
            currency: catalog.currency.code,
            services: catalog.services.map {
                ServiceEntry(name: $0.name, minimumSkill: $0.minimumSkill.name, price: $0.price.decimalString)
            },
            mechanics: catalog.mechanics.map {
                MechanicEntry(id: $0.id.rawValue, name: $0.name, skill: $0.skill.name)
            },
            coupons: catalog.coupons.map { coupon in
                var entry = CouponEntry(code: coupon.code)
                switch coupon.discount {
                case .percent(let percent): entry.percentOff = percent
                case .amount(let amount): entry.amountOff = amount.decimalString
                }
                entry.expires = coupon.expiresAt?.formatted(.iso8601)
                return entry
            })
    }
}
