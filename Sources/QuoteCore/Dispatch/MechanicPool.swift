public import Foundation

/// A snapshot of who is free, indexed so that ``choose(for:)`` costs O(log n), not a scan:
/// one min-heap per skill level ordered by (free since, id), with stale entries skipped lazily.
///
/// It is a pure, in-memory decision structure. Making a choice stick across racing clients is
/// the store's job, which claims the chosen mechanic in the same transaction as the booking.
public struct MechanicPool: Sendable {
    private struct Candidate: Comparable, Sendable {
        var freeSince: Date
        var id: MechanicID
        static func < (lhs: Candidate, rhs: Candidate) -> Bool {
            (lhs.freeSince, lhs.id) < (rhs.freeSince, rhs.id)
        }
    }

    private var mechanics: [MechanicID: Mechanic] = [:]
    /// Free mechanics and since when; a mechanic absent here is busy.
    private var freeSince: [MechanicID: Date] = [:]
    /// One heap per skill, `heaps[skill.rawValue - 1]`; may hold stale entries.
    private var heaps: [MinHeap<Candidate>] = Array(repeating: MinHeap(), count: Skill.allCases.count)

    /// Builds the pool from every mechanic, with `freeSince` `nil` for the busy ones.
    public init(_ entries: some Sequence<(mechanic: Mechanic, freeSince: Date?)>) {
        var buckets: [[Candidate]] = Array(repeating: [], count: Skill.allCases.count)
        for (mechanic, since) in entries {
            mechanics[mechanic.id] = mechanic
            if let since {
                freeSince[mechanic.id] = since
                buckets[mechanic.skill.rawValue - 1].append(Candidate(freeSince: since, id: mechanic.id))
            }
        }
        heaps = buckets.map { MinHeap($0) }
    }

    /// How many mechanics the pool knows.
    public var count: Int { mechanics.count }

    /// How many of them are free.
    public var freeCount: Int { freeSince.count }

    /// Whether `id` is free; `false` for unknown mechanics.
    public func isFree(_ id: MechanicID) -> Bool { freeSince[id] != nil }

    /// Since when `id` has been free, or `nil` when busy or unknown.
    public func freeSince(_ id: MechanicID) -> Date? { freeSince[id] }

    /// The mechanic with identifier `id`.
    public func mechanic(_ id: MechanicID) -> Mechanic? { mechanics[id] }

    /// Marks `id` busy; `false` if they were not free (so nothing changed).
    @discardableResult
    public mutating func claim(_ id: MechanicID) -> Bool {
        freeSince.removeValue(forKey: id) != nil
    }

    /// Marks `id` free from `date` on; `false` if they were already free or are unknown.
    @discardableResult
    public mutating func release(_ id: MechanicID, at date: Date) -> Bool {
        guard let mechanic = mechanics[id], freeSince[id] == nil else { return false }
        freeSince[id] = date
        heaps[mechanic.skill.rawValue - 1].push(Candidate(freeSince: date, id: id))
        compactIfNeeded(mechanic.skill)
        return true
    }

    /// Chooses per ``DispatchPolicy`` without claiming; call ``claim(_:)`` to take the choice.
    public mutating func choose(for request: DispatchRequest) -> Result<Mechanic, QuoteError> {
        if let preferredID = request.preferred {
            guard let preferred = mechanics[preferredID] else {
                return .failure(QuoteError(.invalidResolution, "no mechanic with id \(preferredID)"))
            }
            let able = preferred.skill >= request.requiredSkill
            if able && isFree(preferredID) { return .success(preferred) }
            if request.insist {
                return .failure(
                    able
                        ? QuoteError(.mechanicBusy, "\(preferred.name) is booked on another quote")
                        : QuoteError(.cannotPerform, "\(preferred.name) cannot perform the services of this quote"))
            }
        }
        for skill in Skill.allCases where skill >= request.requiredSkill {
            if let candidate = validTop(skill) { return .success(mechanics[candidate.id]!) }
        }
        return .failure(
            QuoteError(.noMechanicAvailable, "no free mechanic has the \(request.requiredSkill) skill this quote needs")
        )
    }

    /// The earliest valid candidate of `skill`, dropping stale entries on the way.
    private mutating func validTop(_ skill: Skill) -> Candidate? {
        let index = skill.rawValue - 1
        while let top = heaps[index].top {
            if freeSince[top.id] == top.freeSince { return top }
            heaps[index].pop()
        }
        return nil
    }

    /// Rebuilds a heap whose stale entries outnumber its live ones, keeping memory bounded.
    private mutating func compactIfNeeded(_ skill: Skill) {
        let index = skill.rawValue - 1
        guard heaps[index].count > 64 && heaps[index].count > 2 * freeSince.count else { return }
        let live = freeSince.compactMap { id, since in
            mechanics[id]?.skill == skill ? Candidate(freeSince: since, id: id) : nil
        }
        heaps[index] = MinHeap(live)
    }
}
