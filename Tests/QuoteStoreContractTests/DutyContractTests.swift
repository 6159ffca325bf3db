import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

/// Mechanics going off and on duty, and booked quotes moving between them, in every store.
@Suite("Every store keeps duty and reassignments")
struct DutyContractTests {
    @Test(
        "off duty keeps their work and takes no new booking; a reassigned quote goes to the next free, or to the front of the line; back on duty serves the line",
        arguments: StoreFactory.all)
    func dutyAndReassignment(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 3))
        let (one, two, three) = (
            try #require(contract.catalog.mechanic(named: "Junior 1")),
            try #require(contract.catalog.mechanic(named: "Junior 2")),
            try #require(contract.catalog.mechanic(named: "Junior 3"))
        )
        #expect(try await contract.store.mechanicCounts() == MechanicCounts(busy: 0, free: 3, offDuty: 0))
        let first = try await contract.submitAndWait().changedQuote
        #expect(first.mechanic == one)

        let off = try await contract.must(.setDuty(mechanic: "Junior 1", onDuty: false))
        #expect(off.events.map(\.type) == ["mechanic.off_duty"])
        #expect(off.duty?.mechanic == one && off.duty?.onDuty == false && off.quote == nil)
        #expect(try await contract.must(.setDuty(mechanic: "Junior 1", onDuty: false)).events.isEmpty)
        let held = try #require(try await contract.store.mechanics().first { $0.mechanic == one })
        #expect(!held.onDuty && held.quote == first.id, "off duty, the work in hand stays theirs")
        #expect(
            try await contract.store.mechanicCounts() == MechanicCounts(busy: 1, free: 2, offDuty: 1),
            "busy and off duty is counted as both")
        try await Self.expectCountsOfRoster(contract.store)

        // Reassigned by the dispatch order: the next free junior; Junior 1 is freed but off duty.
        let moved = try await contract.must(.reassign(first.id, mechanic: nil))
        #expect(moved.events.map(\.type) == ["quote.reassigned", "mechanic.busy", "mechanic.free"])
        #expect(try moved.changedQuote.mechanic == two && moved.changedQuote.status == .booked)
        guard case .quoteReassigned(let from, _) = moved.events[0].kind else {
            Issue.record("not a reassignment: \(moved.events[0].kind)")
            return
        }
        #expect(from == one)
        #expect(try await contract.store.quote(first.id)?.history.last.map { [$0.from, $0.to] } == [.booked, .booked])

        let second = try await contract.submitAndWait().changedQuote
        #expect(second.mechanic == three, "Junior 1 is free but off duty: never booked")
        let third = try await contract.submitAndWait()
        let fourth = try await contract.submitAndWait()
        #expect(try [third.changedQuote.status, fourth.changedQuote.status] == [.waiting, .waiting])

        // The only free able mechanic is its own: refused, and nothing changes.
        let before = try await contract.store.lastSequence()
        let refused = try await contract.apply([.reassign(second.id, mechanic: nil)])[0]
        #expect(refused.failure?.code == .noMechanicAvailable)
        #expect(try await contract.store.lastSequence() == before)
        #expect(try await contract.store.quote(second.id)?.quote.mechanic == three)
        #expect(try await contract.apply([.reassign(first.id, mechanic: "Junior 2")])[0].failure?.code == .mechanicBusy)
        #expect(
            try await contract.apply([.reassign(first.id, mechanic: "Junior 1")])[0].failure?.code == .mechanicOffDuty)
        #expect(try await contract.apply([.reassign(third.changedQuote.id, mechanic: nil)])[0].failure != nil)

        // No one free: the quote goes to the front of the line.
        contract.clock.advance(seconds: 5)
        try await contract.must(.setDuty(mechanic: "Junior 3", onDuty: false))
        let requeued = try await contract.must(.reassign(second.id, mechanic: nil))
        #expect(requeued.events.map(\.type) == ["quote.reassigned", "mechanic.free"])
        #expect(try requeued.changedQuote.status == .waiting && requeued.waitPosition == 1)
        #expect(
            try await contract.store.waitingQuotes(limit: 10).map(\.id)
                == [second.id, try third.changedQuote.id, try fourth.changedQuote.id])
        #expect(
            try await contract.store.longestWaitingSince() == (try third.changedQuote.waitingSince),
            "the first in line has waited least: the longest wait is the next one's")
        try await Self.expectCountsOfRoster(contract.store)

        // Back on duty: Junior 1 serves the line at once, the front first.
        let back = try await contract.must(.setDuty(mechanic: "Junior 1", onDuty: true))
        #expect(back.events.map(\.type) == ["mechanic.on_duty", "quote.booked", "mechanic.busy"])
        #expect(try back.changedQuote.id == second.id && back.changedQuote.mechanic == one)
        let served = try await contract.must(.setDuty(mechanic: "Junior 3", onDuty: true))
        #expect(try served.changedQuote.id == third.changedQuote.id && served.changedQuote.mechanic == three)

        // Freed, an off-duty mechanic's claim goes back to no one, and the line waits.
        try await contract.must(.setDuty(mechanic: "Junior 2", onDuty: false))
        let done = try await contract.must(.complete(first.id))
        #expect(done.events.map(\.type) == ["quote.completed", "mechanic.free"])
        #expect(try await contract.store.waitingQuotes(limit: 10).map(\.id) == [try fourth.changedQuote.id])

        #expect(doubleBookings(in: try await contract.store.events(after: 0, limit: 1_000)).isEmpty)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test(
        "a reassignment goes to the next free able mechanic even when its own, just freed, comes first in the dispatch order",
        arguments: StoreFactory.all)
    func reassignmentSkipsItsOwnMechanic(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        let juniors = try await [contract.book(), contract.book(), contract.book()]
        #expect(juniors.map(\.1?.name) == ["Steve Brimington", "Mike Fulton", "Ali Bellevue"])
        let moved = try await contract.must(.reassign(juniors[0].0, mechanic: nil))
        #expect(try moved.changedQuote.mechanic?.name == "Dick Duchess", "the least skilled free one but Steve")
        #expect(moved.events.map(\.type) == ["quote.reassigned", "mechanic.busy", "mechanic.free"])
        #expect(doubleBookings(in: try await contract.store.events(after: 0, limit: 1_000)).isEmpty)
    }

    /// The store's counts are those of its roster, as ``QuoteStore/mechanics()`` lists it.
    static func expectCountsOfRoster(_ store: any QuoteStore) async throws {
        let roster = try await store.mechanics()
        let counted = MechanicCounts(
            busy: roster.count { !$0.isFree }, free: roster.count { $0.isFree && $0.onDuty },
            offDuty: roster.count { !$0.onDuty })
        #expect(try await store.mechanicCounts() == counted)
    }
}
