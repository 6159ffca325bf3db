/// A repair the marketplace offers: unique by name, with the least skill it takes and its price.
public struct Service: Hashable, Sendable, Codable {
    /// The service's name, unique in its catalog regardless of case: `Brake Pad Replacement`.
    public var name: String
    /// The least skill a mechanic needs to perform it.
    public var minimumSkill: Skill
    /// The price charged for it.
    public var price: Money

    /// Creates a service.
    public init(name: String, minimumSkill: Skill, price: Money) {
        self.name = name
        self.minimumSkill = minimumSkill
        self.price = price
    }
}

extension Collection where Element == Service {
    /// The highest minimum skill among these services; `nil` when there are none.
    public var requiredSkill: Skill? {
        lazy.map(\.minimumSkill).max()
    }
}
