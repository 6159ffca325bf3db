import Foundation
import PropertyBased
import QuoteCore
import Testing

@Suite("Dispatch policy")
struct DispatchTests {
    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    static func pool(_ mechanics: [Mechanic], busy: Set<Int64> = [], freeSince: [Int64: Date] = [:]) -> MechanicPool {
        MechanicPool(mechanics.map { ($0, busy.contains($0.id.rawValue) ? nil : freeSince[$0.id.rawValue] ?? start) })
    }

    @Test("the least skilled sufficient mechanic is chosen, keeping masters for master work")
    func leastSkilledFirst() throws {
        var pool = Self.pool(Catalog.standard.mechanics)
        #expect(try pool.choose(for: DispatchRequest(requiredSkill: .junior)).get().name == "Steve Brimington")
        #expect(try pool.choose(for: DispatchRequest(requiredSkill: .apprentice)).get().name == "Dick Duchess")
        #expect(try pool.choose(for: DispatchRequest(requiredSkill: .experienced)).get().name == "Moris King")
        #expect(try pool.choose(for: DispatchRequest(requiredSkill: .master)).get().name == "Zane Marine")
    }

    @Test("the customer's preferred mechanic wins when free and able; otherwise the policy falls back")
    func preferredMechanic() throws {
        let joe = Fixtures.mechanic("Joe Murphy")
        var pool = Self.pool(Catalog.standard.mechanics)
        #expect(try pool.choose(for: DispatchRequest(requiredSkill: .apprentice, preferred: joe.id)).get() == joe)
        pool.claim(joe.id)
        #expect(
            try pool.choose(for: DispatchRequest(requiredSkill: .apprentice, preferred: joe.id)).get().name
                == "Dick Duchess")
        let busy = #expect(throws: QuoteError.self) {
            try pool.choose(for: DispatchRequest(requiredSkill: .apprentice, preferred: joe.id, insist: true)).get()
        }
        #expect(busy?.code == .mechanicBusy)
        let mike = Fixtures.mechanic("Mike Fulton")
        let unable = #expect(throws: QuoteError.self) {
            try pool.choose(for: DispatchRequest(requiredSkill: .apprentice, preferred: mike.id, insist: true)).get()
        }
        #expect(unable?.code == .cannotPerform)
    }

    @Test("ties go to the mechanic free the longest, then the lowest id; release re-queues at the back")
    func tiesAndRelease() throws {
        let juniors = (1...3).map { Mechanic(id: MechanicID($0), name: "J\($0)", skill: .junior) }
        var pool = Self.pool(juniors, freeSince: [1: Self.start.addingTimeInterval(10), 2: Self.start, 3: Self.start])
        let request = DispatchRequest(requiredSkill: .junior)
        #expect(try pool.choose(for: request).get().id == MechanicID(2))
        pool.claim(MechanicID(2))
        #expect(try pool.choose(for: request).get().id == MechanicID(3))
        pool.claim(MechanicID(3))
        pool.release(MechanicID(2), at: Self.start.addingTimeInterval(20))
        #expect(try pool.choose(for: request).get().id == MechanicID(1))
        pool.claim(MechanicID(1))
        #expect(try pool.choose(for: request).get().id == MechanicID(2))
        pool.claim(MechanicID(2))
        let none = #expect(throws: QuoteError.self) { try pool.choose(for: request).get() }
        #expect(none?.code == .noMechanicAvailable)
        let claimedAgain = pool.claim(MechanicID(2))
        #expect(!claimedAgain, "claiming a busy mechanic changes nothing")
    }

    @Test("the choice is always free and sufficient, and no free sufficient mechanic of lower skill is passed over")
    func dispatchProperty() async {
        let skills = Gen.element(of: Skill.allCases).map { $0! }
        let roster = zip(skills, Gen.bool, Gen.int(in: 0...50)).array(of: 1...40)
        await propertyCheck(count: 300, input: roster, skills, Gen.int(in: 0...45)) {
            roster, required, preferredIndex in
            var mechanics: [(Mechanic, Date?)] = []
            for (index, entry) in roster.enumerated() {
                let mechanic = Mechanic(id: MechanicID(Int64(index + 1)), name: "M\(index)", skill: entry.0)
                let since: Date? = entry.1 ? nil : Self.start.addingTimeInterval(TimeInterval(entry.2))
                mechanics.append((mechanic, since))
            }
            var pool = MechanicPool(mechanics.map { (mechanic: $0.0, freeSince: $0.1) })
            let preferred = preferredIndex < mechanics.count ? mechanics[preferredIndex].0.id : nil
            let request = DispatchRequest(requiredSkill: required, preferred: preferred)
            let free = mechanics.filter { $0.1 != nil && $0.0.skill >= required }
            switch pool.choose(for: request) {
            case .success(let chosen):
                let entry = mechanics.first { $0.0.id == chosen.id }!
                #expect(entry.1 != nil, "the chosen mechanic is free")
                #expect(chosen.skill >= required, "the chosen mechanic is sufficient")
                if chosen.id != preferred {
                    #expect(!free.contains { $0.0.skill < chosen.skill }, "no lower sufficient skill was passed over")
                    let sameSkill = free.filter { $0.0.skill == chosen.skill }
                    let best = sameSkill.min { ($0.1!, $0.0.id) < ($1.1!, $1.0.id) }!
                    #expect(best.0.id == chosen.id, "ties go to the longest free, then lowest id")
                    if let preferred { #expect(!free.contains { $0.0.id == preferred }) }
                }
            case .failure(let error):
                #expect(error.code == .noMechanicAvailable)
                #expect(free.isEmpty)
            }
        }
    }

    @Test("choosing stays cheap with 100,000 mechanics: claims and releases keep the pool consistent")
    func largePool() throws {
        let count = 100_000
        let mechanics = (1...count).map { index in
            (
                mechanic: Mechanic(id: MechanicID(Int64(index)), name: "M\(index)", skill: Skill.allCases[index % 4]),
                freeSince: Optional(Self.start)
            )
        }
        var pool = MechanicPool(mechanics)
        var clock = Self.start
        var held: [MechanicID] = []
        for round in 0..<50_000 {
            let request = DispatchRequest(requiredSkill: Skill.allCases[round % 4])
            let chosen = try pool.choose(for: request).get()
            #expect(chosen.skill == request.requiredSkill, "a same-skill mechanic is always free here")
            let claimed = pool.claim(chosen.id)
            #expect(claimed)
            held.append(chosen.id)
            if held.count > 1_000 {
                clock = clock.addingTimeInterval(1)
                pool.release(held.removeFirst(), at: clock)
            }
        }
        #expect(pool.freeCount == count - held.count)
    }
}
