import QuoteCore

extension WireRequest {
    /// The top-level keys of a request frame.
    public struct Fields: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Every key of protocol version 1, with its bit: the one list the checks read.
        static let names: [(name: StaticString, field: Fields)] = [
            ("v", .v), ("op", .op), ("id", .id), ("customer", .customer), ("car", .car), ("services", .services),
            ("mechanic", .mechanic), ("coupon", .coupon), ("idempotencyKey", .idempotencyKey), ("book", .book),
            ("wait", .wait), ("quoteId", .quoteId), ("state", .state), ("after", .after), ("limit", .limit),
            ("year", .year), ("trim", .trim), ("make", .make), ("model", .model), ("price", .price),
            ("priceCents", .priceCents), ("reason", .reason), ("since", .since), ("free", .free), ("skill", .skill),
            ("onDuty", .onDuty), ("name", .name), ("catalog", .catalog),
        ]

        public static let v = Fields(rawValue: 1 << 0)
        public static let op = Fields(rawValue: 1 << 1)
        public static let id = Fields(rawValue: 1 << 2)
        public static let customer = Fields(rawValue: 1 << 3)
        public static let car = Fields(rawValue: 1 << 4)
        public static let services = Fields(rawValue: 1 << 5)
        public static let mechanic = Fields(rawValue: 1 << 6)
        public static let coupon = Fields(rawValue: 1 << 7)
        public static let idempotencyKey = Fields(rawValue: 1 << 8)
        public static let book = Fields(rawValue: 1 << 9)
        public static let wait = Fields(rawValue: 1 << 10)
        public static let quoteId = Fields(rawValue: 1 << 11)
        public static let state = Fields(rawValue: 1 << 12)
        public static let after = Fields(rawValue: 1 << 13)
        public static let limit = Fields(rawValue: 1 << 14)
        public static let year = Fields(rawValue: 1 << 15)
        public static let trim = Fields(rawValue: 1 << 16)
        public static let make = Fields(rawValue: 1 << 17)
        public static let model = Fields(rawValue: 1 << 18)
        public static let price = Fields(rawValue: 1 << 19)
        public static let priceCents = Fields(rawValue: 1 << 20)
        public static let reason = Fields(rawValue: 1 << 21)
        public static let since = Fields(rawValue: 1 << 22)
        public static let free = Fields(rawValue: 1 << 23)
        public static let skill = Fields(rawValue: 1 << 24)
        public static let onDuty = Fields(rawValue: 1 << 25)
        public static let name = Fields(rawValue: 1 << 26)
        public static let catalog = Fields(rawValue: 1 << 27)

        /// The field named `name`, if the protocol has one.
        init?(name: String) {
            guard let entry = Self.names.first(where: { $0.name.description == name }) else { return nil }
            self = entry.field
        }

        /// The fields `operation` takes, as `docs/schema/request.schema.json` lists them.
        public static func of(_ operation: Operation) -> Fields {
            let common: Fields = [.v, .op, .id]
            return switch operation {
            case .submit:
                common.union([.customer, .car, .services, .mechanic, .coupon, .idempotencyKey, .book, .wait])
            case .get, .complete: common.union(.quoteId)
            case .list: common.union([.customer, .state, .after, .limit])
            case .resolve: common.union([.quoteId, .year, .trim, .make, .model, .services, .price, .priceCents])
            case .book: common.union([.quoteId, .mechanic, .wait])
            case .cancel: common.union([.quoteId, .reason])
            case .mechanics: common.union([.free, .skill])
            case .services, .stats, .ping: common
            case .events: common.union([.since, .limit])
            case .waiting: common.union(.limit)
            case .setDuty: common.union([.mechanic, .onDuty])
            case .reassign: common.union([.quoteId, .mechanic])
            case .addMechanic: common.union([.name, .skill])
            case .updateMechanic: common.union([.mechanic, .skill])
            case .retireMechanic: common.union(.mechanic)
            case .catalog: common
            case .applyCatalog: common.union(.catalog)
            }
        }

        /// The names of these fields, in protocol order.
        var names: [String] {
            Self.names.filter { contains($0.field) }.map { $0.name.description }
        }
    }

    /// Which keys a decoded frame had: what ``action(currency:)`` checks against the operation.
    /// Empty for a request built in code.
    struct Presence: Sendable, Hashable {
        var fields: Fields = []
        /// The first key the protocol does not have (`customer.` or `car.` before a nested one).
        var unknown: String?
    }

    /// The refusal of a key that the protocol or `operation` does not have, naming the nearest
    /// known key when one is close (`quoteid` → `quoteId`).
    func keyProblem(for operation: Operation) -> Problem? {
        let allowed = Fields.of(operation)
        if let unknown = presence.unknown {
            let (prefix, name, candidates): (String, String, [String])
            // Byte by byte: the key is the caller's text, of any length, and `hasPrefix` on
            // `String` compares normalized characters (quadratic in a run of combining marks).
            if operation == .submit, let rest = Self.dropping("customer.", from: unknown) {
                (prefix, name, candidates) = ("customer.", rest, ["name", "email", "address"])
            } else if allowed.contains(.car), let rest = Self.dropping("car.", from: unknown) {
                (prefix, name, candidates) = ("car.", rest, ["make", "model", "year", "trim"])
            } else {
                (prefix, name, candidates) = ("", unknown, allowed.names)
            }
            var message = "is not a field of \(operation.rawValue)"
            if let near = Self.nearest(name, in: candidates) { message += "; did you mean \"\(prefix + near)\"?" }
            return Problem(field: QuoteLimits.echo(prefix + name), message: message)
        }
        let extra = presence.fields.subtracting(allowed)
        // Every request passes here: no names listed unless some field is out of place.
        guard !extra.isEmpty, let name = extra.names.first else { return nil }
        return Problem(
            field: name,
            message:
                "is not a field of \(operation.rawValue) (its fields: \(allowed.subtracting([.v, .op, .id]).names.joined(separator: ", ")))"
        )
    }

    /// The candidate `name` most likely meant: the same but for case, or at most two edits away.
    static func nearest(_ name: String, in candidates: [String]) -> String? {
        // Keys are short ASCII: anything longer is no typo of one (and is never normalized).
        guard name.utf8.count <= 64 else { return nil }
        let typed = Array(name.lowercased().utf8)
        if let same = candidates.first(where: { Array($0.lowercased().utf8) == typed }) { return same }
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(typed, Array(candidate.lowercased().utf8))
            if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `text` without `prefix` (ASCII), compared byte by byte; `nil` when it does not start so.
    static func dropping(_ prefix: StaticString, from text: String) -> String? {
        let bytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        guard text.utf8.starts(with: bytes) else { return nil }
        return String(decoding: text.utf8.dropFirst(bytes.count), as: UTF8.self)
    }

    /// Whether `a` comes before `b` byte by byte (no Unicode normalization: linear always).
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// Levenshtein distance between two short byte strings.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...max(a.count, 1) where !a.isEmpty {
            current[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
