import Foundation
import PropertyBased
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

/// The wait-list's promises, through the real store and the rules: a booking that finds no
/// one free waits its turn, keeps it across restarts, and is booked in the transaction that
/// frees a mechanic able to serve it; nothing is booked twice and no one is overtaken.
@Suite("Every store keeps the wait-list")
struct WaitListContractTests {
    @Test(
        "waiting quotes are booked in turn by the mechanic a completion frees, in the same transaction; a waiting quote cancelled frees nothing",
        arguments: StoreFactory.all)
    func servedInTurn(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 1))
        let first = try await contract.submitAndWait()
        #expect(try first.changedQuote.status == .booked)
        let second = try await contract.submitAndWait()
        let third = try await contract.submitAndWait()
        #expect(try second.changedQuote.status == .waiting && second.waitPosition == 1)
        #expect(try third.changedQuote.status == .waiting && third.waitPosition == 2)
        #expect(second.events.map(\.type) == ["quote.submitted", "quote.ready", "quote.waiting"])
        #expect(
            try await contract.store.waitingQuotes(limit: 10).map(\.id) == [
                second.changedQuote.id, third.changedQuote.id,
            ])

        let completed = try await contract.must(.complete(first.changedQuote.id))
        #expect(
            completed.events.map(\.type) == ["quote.completed", "mechanic.free", "quote.booked", "mechanic.busy"])
        #expect(completed.events.map(\.seq) == Array(completed.events[0].seq...(completed.events[0].seq + 3)))
        let served = try #require(try await contract.store.quote(second.changedQuote.id)).quote
        #expect(served.status == .booked && served.mechanic?.name == "Junior 1")
        #expect(try await contract.store.waitingQuotes(limit: 10).map(\.id) == [third.changedQuote.id])

        let cancelled = try await contract.must(.cancel(third.changedQuote.id, reason: "no longer needed"))
        #expect(cancelled.events.map(\.type) == ["quote.cancelled"])
        #expect(try await contract.store.mechanics().map(\.quote) == [second.changedQuote.id])
        #expect(try await contract.store.waitingQuotes(limit: 10).isEmpty)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test(
        "a booking that would wait in a full line is refused as one that may not wait, and changes nothing",
        arguments: StoreFactory.all)
    func fullLine(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 1))
        let rules = Rulebook(maximumWaiting: 2)
        func apply(_ command: QuoteCommand) async throws -> Result<CommandOutcome, QuoteError> {
            try await rules.apply([command], catalog: contract.catalog, to: contract.store, at: contract.clock.now)[0]
        }
        let submitAndWait = QuoteCommand.submit(Contract.submission(), idempotencyKey: nil, book: true, wait: true)
        #expect(try await apply(submitAndWait).get().changedQuote.status == .booked)
        let first = try await apply(submitAndWait).get()
        let second = try await apply(submitAndWait).get()
        #expect(first.waitPosition == 1 && second.waitPosition == 2)

        let third = try await apply(submitAndWait).get()
        #expect(try third.changedQuote.status == .ready, "submitted, not put in line")
        #expect(third.bookingError?.code == .noMechanicAvailable)
        #expect(
            third.bookingError?.message.contains("wait-list is full") == true,
            "\(String(describing: third.bookingError))")
        #expect(third.events.map(\.type) == ["quote.submitted", "quote.ready"])
        let line = [try first.changedQuote.id, try second.changedQuote.id]
        #expect(try await contract.store.waitingQuotes(limit: 10).map(\.id) == line)

        let before = try await contract.store.lastSequence()
        let booking = try await apply(.book(try third.changedQuote.id, mechanic: nil, wait: true))
        #expect(throws: QuoteError.self) { try booking.get() }
        #expect(try await contract.store.lastSequence() == before, "nothing was written")
        #expect(try await contract.store.quote(try third.changedQuote.id)?.quote.status == .ready)
        #expect(try await contract.store.waitingQuotes(limit: 10).map(\.id) == line)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test("a quote that named a busy mechanic waits for them alone", arguments: StoreFactory.all)
    func namedWait(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 2))
        let held = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: true)).changedQuote
        #expect(held.mechanic?.name == "Junior 1")
        let ready = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
            .changedQuote
        let named = try await contract.must(.book(ready.id, mechanic: "Junior 1", wait: true))
        #expect(try named.changedQuote.status == .waiting && named.changedQuote.waitingFor?.name == "Junior 1")
        let other = try await contract.submitAndWait()
        #expect(try other.changedQuote.mechanic?.name == "Junior 2", "Junior 2 was free: no one waits for them")
        let freedTwo = try await contract.must(.complete(other.changedQuote.id))
        #expect(freedTwo.events.map(\.type) == ["quote.completed", "mechanic.free"], "the named wait is not theirs")
        let freedOne = try await contract.must(.complete(held.id))
        #expect(freedOne.events.map(\.type) == ["quote.completed", "mechanic.free", "quote.booked", "mechanic.busy"])
        #expect(try await contract.store.quote(ready.id)?.quote.mechanic?.name == "Junior 1")
    }

    @Test(
        "a freed mechanic serves the oldest quote they can do, passing over older work beyond their skill",
        arguments: StoreFactory.all)
    func skillDecides(_ factory: StoreFactory) async throws {
        let catalog = try Catalog(
            services: Catalog.standard.services,
            mechanics: [
                Mechanic(id: MechanicID(1), name: "Junior", skill: .junior),
                Mechanic(id: MechanicID(2), name: "Master", skill: .master),
            ])
        let contract = try await Contract(factory, catalog: catalog)
        let junior = try await contract.submitAndWait()
        let master = try await contract.submitAndWait(["Timing Belt Replacement"])
        #expect(try [junior.changedQuote.mechanic?.name, master.changedQuote.mechanic?.name] == ["Junior", "Master"])
        let bigJob = try await contract.submitAndWait(["Timing Belt Replacement"])
        let smallJob = try await contract.submitAndWait()
        #expect([bigJob.waitPosition, smallJob.waitPosition] == [1, 2])
        try await contract.must(.complete(junior.changedQuote.id))
        #expect(try await contract.store.quote(smallJob.changedQuote.id)?.quote.mechanic?.name == "Junior")
        #expect(try await contract.store.quote(bigJob.changedQuote.id)?.quote.status == .waiting)
        try await contract.must(.complete(master.changedQuote.id))
        #expect(try await contract.store.quote(bigJob.changedQuote.id)?.quote.mechanic?.name == "Master")
    }

    @Test("the line survives a new handle on the store and drains in the same order", arguments: StoreFactory.all)
    func lineIsDurable(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 1))
        let held = try await contract.submitAndWait()
        var waiting: [QuoteID] = []
        for _ in 0..<4 { waiting.append(try await contract.submitAndWait().changedQuote.id) }
        let reopened = try await contract.another()
        #expect(try await reopened.waitingQuotes(limit: 10).map(\.id) == waiting)
        var holder = try held.changedQuote.id
        for next in waiting {
            _ = try await contract.apply([.complete(holder)], on: reopened)[0].get()
            #expect(try await reopened.quote(next)?.quote.status == .booked)
            holder = next
        }
    }

    @Test("after a roster change, free mechanics take from the line", arguments: StoreFactory.all)
    func rosterChange(_ factory: StoreFactory) async throws {
        let one = try StoreContractTests.catalog(juniors: 1)
        let contract = try await Contract(factory, catalog: one)
        _ = try await contract.submitAndWait()
        let waiting = try await contract.submitAndWait()
        #expect(try waiting.changedQuote.status == .waiting)
        let nothing = try await contract.rules.apply([.serveWaitList], catalog: one, to: contract.store)
        #expect(nothing[0].failure?.code == .noMechanicAvailable, "no one is free: nothing to serve")
        let two = try StoreContractTests.catalog(juniors: 2)
        try await contract.store.syncCatalog(two)
        let served = try await contract.rules.apply([.serveWaitList], catalog: two, to: contract.store)[0].get()
        #expect(served.events.map(\.type) == ["quote.booked", "mechanic.busy"])
        #expect(try await contract.store.quote(waiting.changedQuote.id)?.quote.mechanic?.name == "Junior 2")
    }

    @Test(
        "random bookings that wait, completions and cancellations match a model of the line: no double booking, no one overtaken",
        arguments: StoreFactory.all)
    func lineMatchesTheModel(_ factory: StoreFactory) async throws {
        let services = ["Oil Change", "Brake Pad Replacement", "Timing Belt Replacement"]
        let names = ["Steve Brimington", "Dick Duchess", "Joe Murphy"]
        // Each step: what to do (0-1 submit, book and wait; 2 book a named mechanic and wait;
        // 3 complete; 4 cancel a booked quote; 5 cancel a waiting one), a service, a name, which
        // quote, and how far the clock moves.
        let step = zip(
            Gen.int(in: 0...5), Gen.int(in: 0...2), Gen.int(in: 0...2), Gen.int(in: 0...100), Gen.int(in: 0...1)
        ).map { [$0, $1, $2, $3, $4] }
        await propertyCheck(count: 25, input: step.array(of: 20...80)) { steps in
            do {
                let catalog = try Catalog(
                    services: Catalog.standard.services,
                    mechanics: Catalog.standard.mechanics.filter { [1, 2, 4, 10].contains($0.id.rawValue) })
                let contract = try await Contract(factory, catalog: catalog)
                var model = WaitListModel(catalog)
                for values in steps {
                    contract.clock.advance(seconds: Double(values[4]))
                    let service = services[values[1]]
                    switch values[0] {
                    case 0, 1:
                        let outcome = try await contract.submitAndWait([service])
                        let expected = try model.book(
                            outcome.changedQuote.id, needs: outcome.changedQuote.request.requiredSkill)
                        #expect(try outcome.changedQuote.mechanic?.id == expected.mechanic, "\(service)")
                        #expect(outcome.waitPosition == expected.position)
                    case 2:
                        let ready = try await contract.must(
                            .submit(Contract.submission([service]), idempotencyKey: nil, book: false)
                        ).changedQuote
                        let name = names[values[2]]
                        let result = try await contract.apply([.book(ready.id, mechanic: name, wait: true)])[0]
                        let named = try #require(catalog.mechanic(named: name))
                        guard named.skill >= ready.request.requiredSkill else {
                            #expect(result.failure?.code == .cannotPerform)
                            continue
                        }
                        let outcome = try result.get()
                        let expected = model.book(ready.id, needs: ready.request.requiredSkill, named: named.id)
                        #expect(try outcome.changedQuote.mechanic?.id == expected.mechanic, "\(service) named \(name)")
                        #expect(outcome.waitPosition == expected.position)
                    case 3, 4:
                        guard let quote = model.booked(at: values[3]) else { continue }
                        let outcome = try await contract.must(
                            values[0] == 3 ? .complete(quote) : .cancel(quote, reason: nil))
                        let expected = model.release(heldBy: quote, at: contract.clock.now)
                        let booked = outcome.events.compactMap { event -> QuoteID? in
                            if case .mechanicBusy(_, let next) = event.kind { return next }
                            return nil
                        }
                        #expect(booked == expected.map { [$0] } ?? [], "served from the line")
                    default:
                        guard let quote = model.waiting(at: values[3]) else { continue }
                        let outcome = try await contract.must(.cancel(quote, reason: nil))
                        #expect(outcome.events.map(\.type) == ["quote.cancelled"])
                        model.leave(quote)
                    }
                    #expect(try await contract.store.waitingQuotes(limit: 1_000).map(\.id) == model.line.map(\.quote))
                }
                let log = try await contract.log()
                #expect(doubleBookings(in: log).isEmpty)
                #expect(log.map(\.seq) == Array(1...Int64(log.count)))
                #expect(try await contract.store.integrityViolations().isEmpty)
            } catch {
                Issue.record(error)
            }
        }
    }
}

extension Contract {
    /// Submits `services` with book and wait.
    func submitAndWait(_ services: [String] = ["Oil Change"]) async throws -> CommandOutcome {
        try await must(.submit(Contract.submission(services), idempotencyKey: nil, book: true, wait: true))
    }
}

/// An in-memory statement of the wait-list, independent of any store: who holds whom since
/// when, the line in order, and whom a freed mechanic serves.
struct WaitListModel {
    struct Waiting {
        var quote: QuoteID
        var needs: Skill
        var named: MechanicID?
    }

    private let mechanics: [Mechanic]
    /// Free mechanics and since when, in milliseconds (what a store keeps).
    private var freeSince: [MechanicID: Int64] = [:]
    private var holder: [QuoteID: MechanicID] = [:]
    private(set) var line: [Waiting] = []

    init(_ catalog: Catalog) {
        mechanics = catalog.mechanics
        for mechanic in mechanics { freeSince[mechanic.id] = 0 }
    }

    /// Books `quote` or puts it in line; returns the mechanic claimed or the place in line.
    mutating func book(_ quote: QuoteID, needs: Skill, named: MechanicID? = nil) -> (
        mechanic: MechanicID?, position: Int?
    ) {
        let choice: MechanicID?
        if let named {
            choice = freeSince[named] != nil ? named : nil
        } else {
            choice =
                mechanics.filter { $0.skill >= needs && freeSince[$0.id] != nil }.min { lhs, rhs in
                    (lhs.skill, freeSince[lhs.id]!, lhs.id.rawValue) < (rhs.skill, freeSince[rhs.id]!, rhs.id.rawValue)
                }?.id
        }
        if let choice {
            freeSince[choice] = nil
            holder[quote] = choice
            return (choice, nil)
        }
        line.append(Waiting(quote: quote, needs: needs, named: named))
        return (nil, line.count)
    }

    /// Frees the mechanic `quote` held at `date`; returns the waiting quote they take, if any.
    mutating func release(heldBy quote: QuoteID, at date: Date) -> QuoteID? {
        guard let mechanic = holder.removeValue(forKey: quote) else { return nil }
        let skill = mechanics.first { $0.id == mechanic }!.skill
        guard let index = line.firstIndex(where: { $0.needs <= skill && ($0.named == nil || $0.named == mechanic) })
        else {
            freeSince[mechanic] = Int64((date.timeIntervalSince1970 * 1_000).rounded())
            return nil
        }
        let next = line.remove(at: index).quote
        holder[next] = mechanic
        return next
    }

    mutating func leave(_ quote: QuoteID) {
        line.removeAll { $0.quote == quote }
    }

    /// The booked quote at `index`, cycling, in id order.
    func booked(at index: Int) -> QuoteID? {
        let quotes = holder.keys.sorted()
        return quotes.isEmpty ? nil : quotes[index % quotes.count]
    }

    /// The waiting quote at `index`, cycling, in line order.
    func waiting(at index: Int) -> QuoteID? {
        line.isEmpty ? nil : line[index % line.count].quote
    }
}
