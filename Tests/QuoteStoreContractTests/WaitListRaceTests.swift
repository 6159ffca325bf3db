import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import Synchronization
import TestSupport
import Testing

/// The wait-list where two daemons' transactions cross on one PostgreSQL database: one frees
/// a mechanic while the other, which cannot see that yet, would put a quote in line. Whichever
/// commits first, the quote ends booked, never waiting beside a free mechanic.
@Suite("The wait-list across daemons", .timeLimit(.minutes(2)))
struct WaitListRaceTests {
    @Test(
        "a quote that would wait while another daemon's open transaction frees its mechanic is booked once that commits"
    )
    func bookingWaitsForTheRelease() async throws {
        let race = try await Race()
        // The first daemon completes the booked quote, freeing Junior 1, and holds its
        // transaction open.
        let release = try await race.holdOpen([.complete(race.booked)], on: race.contract.store)
        // The second cannot see Junior 1 free yet.
        let booking = race.apply(.book(race.ready, mechanic: nil, wait: true), on: race.other)
        try await race.waitUntilBlockedOrDone(booking)
        #expect(try await release.commit()[0].get().events.map(\.type) == ["quote.completed", "mechanic.free"])
        let booked = try await booking.value.get()
        #expect(try booked.changedQuote.status == .booked && booked.changedQuote.mechanic?.name == "Junior 1")
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test(
        "a mechanic freed while another daemon's open transaction puts a quote in line serves that quote once it commits"
    )
    func releaseWaitsForTheLine() async throws {
        let race = try await Race()
        // The first daemon puts the ready quote in line (Junior 1 is busy) and holds its
        // transaction open.
        let line = try await race.holdOpen(
            [.book(race.ready, mechanic: nil, wait: true)], on: race.contract.store)
        // The second frees Junior 1, and cannot see the quote in line yet.
        let completion = race.apply(.complete(race.booked), on: race.other)
        try await race.waitUntilBlockedOrDone(completion)
        #expect(try await line.commit()[0].get().changedQuote.status == .waiting)
        let completed = try await completion.value.get()
        #expect(completed.events.map(\.type) == ["quote.completed", "mechanic.free", "quote.booked", "mechanic.busy"])
        #expect(try await race.contract.store.quote(race.ready)?.quote.mechanic?.name == "Junior 1")
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test("two daemons freeing mechanics at once do not wait for each other's wait-list lock")
    func releasesShareTheLock() async throws {
        let race = try await Race(juniors: 2)
        let second = try await race.contract.submitAndWait().changedQuote.id
        let release = try await race.holdOpen([.complete(race.booked)], on: race.contract.store)
        let completion = race.apply(.complete(second), on: race.other)
        try await race.waitUntilBlockedOrDone(completion)
        let done = try await race.ended(completion)
        #expect(done, "the second completion waited for the first's transaction")
        _ = try await release.commit()[0].get()
        _ = try await completion.value.get()
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test(
        "a quote reassigned while another daemon's open transaction frees a mechanic goes to that mechanic, not to the line"
    )
    func reassignmentWaitsForTheRelease() async throws {
        let race = try await Race(juniors: 2)
        // Junior 2 holds a second quote, which the first daemon completes, holding its
        // transaction open; the second daemon then moves the first quote off Junior 1, who
        // goes off duty.
        let second = try await race.contract.submitAndWait().changedQuote.id
        _ = try await race.contract.must(.setDuty(mechanic: "Junior 1", onDuty: false))
        let release = try await race.holdOpen([.complete(second)], on: race.contract.store)
        let reassignment = race.apply(.reassign(race.booked, mechanic: nil), on: race.other)
        try await race.waitUntilBlockedOrDone(reassignment)
        _ = try await release.commit()[0].get()
        let moved = try await reassignment.value.get()
        #expect(try moved.changedQuote.status == .booked && moved.changedQuote.mechanic?.name == "Junior 2")
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test(
        "a transaction whose booking was refused for a full line still holds the line's lock when it frees a mechanic"
    )
    func lockOutlastsARefusedBooking() async throws {
        let race = try await Race(juniors: 2)
        // Junior 2 holds a second quote; a third waits for Junior 2 alone, filling a line of one.
        _ = try await race.contract.submitAndWait()
        let third = try await race.contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
        let junior2 = try #require(race.contract.catalog.mechanic(named: "Junior 2"))
        let rules = Rulebook()
        #expect(
            try await rules.apply(
                [.book(third.changedQuote.id, mechanic: junior2, wait: true)], catalog: race.contract.catalog,
                to: race.contract.store)[0].get().changedQuote.status == .waiting)
        // The first daemon's submission may not wait in the full line (its booking undone to
        // a savepoint); then it frees Junior 1, whom no one in line can take, and stays open.
        let submission = try Rulebook().check(
            .submit(Contract.submission(), idempotencyKey: nil, book: true, wait: true), in: race.contract.catalog,
            at: race.contract.clock.now
        ).get()
        let release = try await race.holdOpen(
            [submission, .complete(race.booked)], on: race.contract.store, rules: Rulebook(maximumWaiting: 1))
        let booking = race.apply(.book(race.ready, mechanic: nil, wait: true), on: race.other)
        try await race.waitUntilBlockedOrDone(booking)
        let results = try await release.commit()
        #expect(try results[0].get().changedQuote.status == .ready)
        _ = try results[1].get()
        let booked = try await booking.value.get()
        #expect(try booked.changedQuote.status == .booked && booked.changedQuote.mechanic?.name == "Junior 1")
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test("a free mechanic whose duty another daemon's open transaction has checked is still picked, not passed over")
    func mechanicWhoseDutyIsCheckedIsPicked() async throws {
        let race = try await Race()
        let other = try await race.contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
        let junior = try #require(race.contract.catalog.mechanic(named: "Junior 1"))
        // The first daemon's booking of Junior 1, busy, is refused after it checks their duty;
        // its transaction stays open, holding that check.
        let check = try await race.holdOpen(
            [.book(other.changedQuote.id, mechanic: junior, wait: false)], on: race.contract.store)
        // Then Junior 1 is freed and committed, and the second daemon books whoever is free.
        _ = try await race.apply(.complete(race.booked), on: race.other).value.get()
        let booked = try await race.apply(.book(race.ready, mechanic: nil, wait: true), on: race.other).value.get()
        #expect(try booked.changedQuote.status == .booked && booked.changedQuote.mechanic?.name == "Junior 1")
        #expect(try await check.commit()[0].failure?.code == .mechanicBusy)
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test(
        "a quote in line that another daemon's refused command looked at is still served by a mechanic freed meanwhile")
    func refusedCommandDoesNotHideAWaitingQuote() async throws {
        let race = try await Race()
        #expect(
            try await race.contract.must(.book(race.ready, mechanic: nil, wait: true)).changedQuote.status == .waiting)
        // The first daemon is asked to book the waiting quote again: refused, its transaction
        // held open.
        let refused = try await race.holdOpen([.book(race.ready, mechanic: nil, wait: false)], on: race.contract.store)
        // The second frees Junior 1, who takes the quote from the line.
        let completed = try await race.apply(.complete(race.booked), on: race.other).value.get()
        #expect(completed.events.map(\.type) == ["quote.completed", "mechanic.free", "quote.booked", "mechanic.busy"])
        #expect(try await refused.commit()[0].failure?.code == .illegalTransition)
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }

    @Test("a quote that names a mechanic another daemon is freeing is booked with them, not left waiting")
    func namedBookingWaitsForTheRelease() async throws {
        let race = try await Race()
        let release = try await race.holdOpen([.complete(race.booked)], on: race.contract.store)
        let junior = try #require(race.contract.catalog.mechanic(named: "Junior 1"))
        let booking = race.apply(.book(race.ready, mechanic: junior, wait: true), on: race.other)
        try await race.waitUntilBlockedOrDone(booking)
        _ = try await release.commit()[0].get()
        let booked = try await booking.value.get()
        #expect(try booked.changedQuote.status == .booked && booked.changedQuote.mechanic?.name == "Junior 1")
        try await race.expectNoOneWaitsBesideAFreeMechanic()
    }
}

/// One mechanic, Junior 1, holding one quote (`booked`); a second quote `ready` to book; two
/// handles on one PostgreSQL database, as two daemons have.
private struct Race {
    let contract: Contract
    let other: any QuoteStore
    let booked: QuoteID
    let ready: QuoteID
    let database: String

    /// With `juniors` mechanics; the first quote is booked with Junior 1.
    init(juniors: Int = 1) async throws {
        contract = try await Contract(.postgres, catalog: try StoreContractTests.catalog(juniors: juniors))
        booked = try await contract.submitAndWait().changedQuote.id
        ready = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
            .changedQuote.id
        other = try await contract.another()
        let url = try #require((contract.database as? PostgresDatabase)?.url)
        database = try #require(url.split(separator: "/").last.map(String.init))
    }

    /// A transaction of `store` that has applied `commands` by `rules` and stays open until
    /// ``OpenTransaction/commit()``.
    func holdOpen(
        _ commands: [CheckedCommand], on store: any QuoteStore, rules: Rulebook = Rulebook()
    ) async throws -> OpenTransaction {
        let (applied, appliedSignal) = AsyncStream<Void>.makeStream()
        let (gate, gateSignal) = AsyncStream<Void>.makeStream()
        let catalog = contract.catalog
        let requests = commands.map { CheckedRequest($0, by: .anonymous) }
        let task = Task {
            // Applied, or failed: either way `holdOpen` returns (a failure shows at `commit()`).
            defer { appliedSignal.finish() }
            return try await store.write { transaction throws(StoreError) in
                let results = try await rules.applyBatch(requests: requests, catalog: catalog, in: transaction).results
                appliedSignal.yield()
                for await _ in gate { break }
                return results
            }.value
        }
        var signals = applied.makeAsyncIterator()
        _ = await signals.next()
        return OpenTransaction(task: task, gate: gateSignal)
    }

    /// Applies `command` on `store` in a task of its own.
    func apply(
        _ command: CheckedCommand, on store: any QuoteStore
    ) -> Task<Result<CommandOutcome, QuoteError>, any Error> {
        let rules = contract.rules
        let catalog = contract.catalog
        return Task {
            let results = try await rules.apply([command], catalog: catalog, to: store)
            return try #require(results.first)
        }
    }

    /// Returns once `task` has ended or one of the database's sessions waits for the
    /// wait-list's lock.
    func waitUntilBlockedOrDone<T>(_ task: Task<T, any Error>) async throws {
        let done = Atomic<Bool>(false)
        let watcher = Task {
            _ = try? await task.value
            done.store(true, ordering: .relaxed)
        }
        defer { watcher.cancel() }
        let deadline = ContinuousClock.now + .seconds(30)
        while !done.load(ordering: .relaxed), try !sessionWaitsForALock() {
            try #require(ContinuousClock.now < deadline, "the second transaction neither ended nor waited for a lock")
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Whether `task` has ended, rather than wait for the wait-list's lock: asked once it has
    /// done one or the other.
    func ended<T>(_ task: Task<T, any Error>) async throws -> Bool {
        if try sessionWaitsForALock() { return false }
        _ = try? await task.value
        return true
    }

    private func sessionWaitsForALock() throws -> Bool {
        try PostgresCluster.start().sql(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'wait_list_lock'::regclass",
            database: database) != "0"
    }

    /// No quote waits while a mechanic able to serve it is free; the store holds together.
    func expectNoOneWaitsBesideAFreeMechanic() async throws {
        let waiting = try await contract.store.waitingQuotes(limit: 10)
        let free = try await contract.store.mechanics().filter { $0.isFree && $0.onDuty }
        #expect(
            waiting.isEmpty || free.isEmpty, "\(waiting.map(\.id)) wait while \(free.map(\.mechanic.name)) are free")
        #expect(try await contract.store.integrityViolations().isEmpty)
    }
}

/// A transaction held open by ``Race/holdOpen(_:on:)``.
private struct OpenTransaction {
    let task: Task<[Result<CommandOutcome, QuoteError>], any Error>
    let gate: AsyncStream<Void>.Continuation

    /// Lets the transaction commit; returns what its commands did.
    func commit() async throws -> [Result<CommandOutcome, QuoteError>] {
        gate.yield()
        gate.finish()
        return try await task.value
    }
}
