/// A mechanic's stable identifier: it never changes, even if the name does.
public struct MechanicID: NumericIdentifier {
    public let rawValue: Int64

    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// The largest id a catalog may give (2^53 - 1: any JSON reader holds it exactly), so
    /// that the next one is always at hand.
    public static let maximum = MechanicID(9_007_199_254_740_991)
}

/// A mechanic who can be booked for work up to their skill.
public struct Mechanic: Hashable, Sendable, Codable {
    /// The stable identifier.
    public var id: MechanicID
    /// The name customers and support staff know them by, unique in the catalog.
    public var name: String
    /// How demanding a job they can take.
    public var skill: Skill

    /// Creates a mechanic.
    public init(id: MechanicID, name: String, skill: Skill) {
        self.id = id
        self.name = name
        self.skill = skill
    }

    /// Whether this mechanic may do every one of `services`: their skill must be at least the
    /// highest minimum among them (`>=`; the original article's `>` refused exact matches).
    public func canPerform(_ services: some Collection<Service>) -> Bool {
        guard let required = services.requiredSkill else { return true }
        return skill >= required
    }

    /// The services among `services` this mechanic may not do, in order.
    public func servicesBeyondSkill(_ services: some Collection<Service>) -> [Service] {
        services.filter { $0.minimumSkill > skill }
    }
}
