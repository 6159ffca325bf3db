public import Foundation

/// The order in which free mechanics are offered work, in one place: among free, active
/// mechanics with at least the skill the work needs, the least skilled first (masters are kept
/// for master work), then the one free the longest, then the lowest id. Deterministic.
///
/// The customer's preferred mechanic, when free and able, comes before this order; that
/// part is the rules' (`QuoteRules`). A store picks in this order in one query (SQL: `ORDER
/// BY skill, free_since, id`), and the store contract suite checks its picks against
/// ``sortKey(skill:freeSince:id:)``.
public enum DispatchOrder {
    /// The ordering key of a free candidate: the smaller key is chosen first.
    public static func sortKey(skill: Skill, freeSince: Date, id: MechanicID) -> (Int, Date, Int64) {
        (skill.rawValue, freeSince, id.rawValue)
    }

    /// Whether `lhs` is offered work before `rhs`.
    public static func precedes(
        _ lhs: (skill: Skill, freeSince: Date, id: MechanicID), _ rhs: (skill: Skill, freeSince: Date, id: MechanicID)
    ) -> Bool {
        sortKey(skill: lhs.skill, freeSince: lhs.freeSince, id: lhs.id)
            < sortKey(skill: rhs.skill, freeSince: rhs.freeSince, id: rhs.id)
    }
}
