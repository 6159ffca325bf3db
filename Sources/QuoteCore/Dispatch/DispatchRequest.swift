public import Foundation

/// What a booking asks of dispatch: the skill the work needs and, optionally, a mechanic.
public struct DispatchRequest: Hashable, Sendable {
    /// The least skill the quote's services need.
    public var requiredSkill: Skill
    /// The mechanic asked for, if any.
    public var preferred: MechanicID?
    /// Whether the preferred mechanic is a demand (fail if busy or unable) rather than a wish
    /// (fall back to the policy's choice).
    public var insist: Bool

    /// Creates a request.
    public init(requiredSkill: Skill, preferred: MechanicID? = nil, insist: Bool = false) {
        self.requiredSkill = requiredSkill
        self.preferred = preferred
        self.insist = insist
    }
}

/// The dispatch rule, in one place: among free mechanics able to do the work, the preferred
/// one if free; otherwise the least skilled sufficient mechanic (masters are kept for master
/// work), ties going to the one free the longest, then to the lowest id. Deterministic.
///
/// Stores that pick in SQL order by ``sortKey(skill:freeSince:id:)``'s fields in the same order.
public enum DispatchPolicy {
    /// The ordering key of a free candidate: smaller is chosen first.
    public static func sortKey(skill: Skill, freeSince: Date, id: MechanicID) -> (Int, Date, Int64) {
        (skill.rawValue, freeSince, id.rawValue)
    }
}
