import Foundation
import PropertyBased
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

/// The roster and the catalog changed live, through the rules, in every store.
@Suite("Every store keeps a live, versioned catalog")
struct RosterContractTests {
    @Test(
        "mechanics added, changed and retired live: each change a version with its event; the added serves the line, the retired is never booked again and keeps their work",
        arguments: StoreFactory.all)
    func rosterChanges(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 1))
        #expect(try await contract.store.catalog().version == 1, "seeded with the catalog it was opened with")
        let junior = try #require(contract.catalog.mechanic(named: "Junior 1"))
        let first = try await contract.submitAndWait().changedQuote
        #expect(first.mechanic == junior)
        let second = try await contract.submitAndWait().changedQuote
        #expect(second.status == .waiting)

        // Added: a new id, on duty, and the line served at once.
        let added = try await contract.change(.addMechanic(name: "Ann Lee", skill: .master))
        #expect(added.events.map(\.type) == ["mechanic.added", "quote.booked", "mechanic.busy"])
        let ann = try #require(added.mechanic)
        #expect(ann.id == MechanicID(2) && ann.skill == .master)
        #expect(try added.changedQuote.id == second.id && added.changedQuote.mechanic == ann)
        let afterAdd = try await contract.store.catalog()
        #expect(afterAdd.version == 2 && afterAdd.mechanic(named: "ann lee") == ann)

        // A name on the roster, in any case, is refused and changes nothing.
        let before = try await contract.store.lastSequence()
        let duplicate = try await contract.changes([.addMechanic(name: "ANN LEE", skill: .junior)])[0]
        #expect(duplicate.failure?.code == .duplicateMechanic)
        #expect(try await contract.store.lastSequence() == before)
        #expect(try await contract.store.catalog().version == 2)
        #expect(try await contract.changes([.retireMechanic(mechanic: "Nobody")])[0].failure?.code == .unknownMechanic)

        // Changed: the event says from which skill; the same skill again is no change.
        let updated = try await contract.change(.updateMechanic(mechanic: "ann lee", skill: .junior))
        #expect(updated.events.map(\.type) == ["mechanic.updated"])
        guard case .roster(let now, .updated(let from)) = updated.events[0].kind else {
            Issue.record("not a change of skill: \(updated.events[0].kind)")
            return
        }
        #expect(from == .master && now.skill == .junior && now.id == ann.id)
        #expect(try await contract.change(.updateMechanic(mechanic: "Ann Lee", skill: .junior)).events.isEmpty)
        #expect(try await contract.store.catalog().version == 3)

        // Retired: their booked quote stays theirs; never booked again; the rest of the line
        // goes to whoever is left.
        let retired = try await contract.change(.retireMechanic(mechanic: "Junior 1"))
        #expect(retired.events.map(\.type) == ["mechanic.retired"])
        try await DutyContractTests.expectCountsOfRoster(contract.store)
        #expect(try await !contract.store.mechanics().contains { $0.mechanic.id == junior.id })
        #expect(try await contract.store.quote(first.id)?.quote.mechanic == junior)
        #expect(try await contract.store.catalog().mechanic(named: "Junior 1") == nil)
        let third = try await contract.submitAndWait().changedQuote
        #expect(third.status == .waiting, "Ann is busy and Junior 1 retired")
        let done = try await contract.change(.complete(first.id))
        #expect(done.events.map(\.type) == ["quote.completed", "mechanic.free"], "a retired mechanic takes no one")
        let served = try await contract.change(.complete(second.id))
        #expect(served.events.map(\.type) == ["quote.completed", "mechanic.free", "quote.booked", "mechanic.busy"])
        #expect(served.events[2].quote?.id == third.id && served.events[2].quote?.mechanic?.id == ann.id)
        #expect(
            try await contract.changes([.book(try contract.submit().id, mechanic: "Junior 1")])[0].failure?.code
                == .unknownMechanic)
        #expect(doubleBookings(in: try await contract.log()).isEmpty)
    }

    @Test(
        "a quote waiting for a mechanic by name goes back to ready, told why, when they go off duty or retire",
        arguments: StoreFactory.all)
    func namedWaitersAreTold(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 2))
        let busy = try await contract.submitAndWait().changedQuote
        #expect(busy.mechanic?.name == "Junior 1")
        let other = try await contract.submitAndWait().changedQuote
        #expect(other.mechanic?.name == "Junior 2")
        var waiters: [QuoteID] = []
        for _ in 0..<2 {
            let quote = try await contract.submit()
            let waiting = try await contract.change(.book(quote.id, mechanic: "Junior 1", wait: true))
            #expect(try waiting.changedQuote.status == .waiting)
            waiters.append(quote.id)
        }
        let anyone = try await contract.submitAndWait().changedQuote

        let off = try await contract.change(.setDuty(mechanic: "Junior 1", onDuty: false))
        #expect(off.events.map(\.type) == ["mechanic.off_duty", "quote.ready", "quote.ready"])
        for (event, id) in zip(off.events.dropFirst(), waiters) {
            let quote = try #require(event.quote)
            #expect(quote.id == id && quote.status == .ready)
            #expect(quote.notice?.contains("Junior 1 is off duty") == true)
            #expect(quote.customerMessage.hasPrefix("Junior 1 is off duty."), "\(quote.customerMessage)")
            #expect(try await contract.store.quote(id)?.history.last.map { [$0.from, $0.to] } == [.waiting, .ready])
        }
        #expect(try await contract.store.waitingQuotes(limit: 10).map(\.id) == [anyone.id], "waiting for anyone: stays")

        // Off duty, they have no line: a booking for them alone is refused.
        #expect(
            try await contract.changes([.book(waiters[1], mechanic: "Junior 1", wait: true)])[0].failure?.code
                == .mechanicOffDuty)
        // Back on duty and booked again, the notice is gone.
        try await contract.change(.setDuty(mechanic: "Junior 1", onDuty: true))
        let rebooked = try await contract.change(.book(waiters[0], mechanic: "Junior 1", wait: true))
        #expect(try rebooked.changedQuote.status == .waiting && rebooked.changedQuote.notice == nil)
        let retired = try await contract.change(.retireMechanic(mechanic: "Junior 1"))
        #expect(retired.events.map(\.type) == ["mechanic.retired", "quote.ready"])
        #expect(retired.events.last?.quote?.notice?.contains("no longer works with us") == true)
    }

    @Test(
        "a catalog applied as one change: an event per mechanic then catalog.applied; the same again changes nothing; the currency waits for no open quote",
        arguments: StoreFactory.all)
    func catalogApplied(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 2))
        let open = try await contract.submit()
        var services = contract.catalog.services
        let oil = try #require(services.firstIndex { $0.name == "Oil Change" })
        services[oil].price = Money(cents: 4_000, currency: .usd)
        let next = try Catalog(
            services: services,
            mechanics: [
                Mechanic(id: MechanicID(2), name: "Junior 2", skill: .apprentice),
                Mechanic(id: MechanicID(7), name: "Moe", skill: .master),
            ])
        let applied = try await contract.change(.applyCatalog(next))
        #expect(
            applied.events.map(\.type) == ["mechanic.updated", "mechanic.added", "mechanic.retired", "catalog.applied"])
        #expect(applied.catalogVersion == 2)
        let stored = try await contract.store.catalog()
        #expect(stored.version == 2 && stored.difference(to: next).isEmpty, "\(stored.difference(to: next))")
        #expect(stored.services.map(\.name) == next.services.map(\.name), "in the order given")
        #expect(stored.service(named: "oil change")?.price.cents == 4_000)
        #expect(try await contract.store.mechanics().map(\.mechanic.name).sorted() == ["Junior 2", "Moe"])

        // A submission checked against the version before (received while the change
        // committed) is priced against this one.
        let checked = try contract.rules.check(
            .submit(Contract.submission(), idempotencyKey: nil, book: false), in: contract.catalog,
            at: contract.clock.now
        ).get()
        let stale = try await contract.rules.apply([checked], catalog: stored, to: contract.store)[0]
        let repriced = try stale.get().changedQuote
        #expect(repriced.price?.cents == 4_000)

        let again = try await contract.change(.applyCatalog(next))
        #expect(again.events.isEmpty && again.catalogVersion == 2)

        let euros = try Catalog(
            currency: Currency("EUR"),
            services: next.services.map {
                Service(
                    name: $0.name, minimumSkill: $0.minimumSkill,
                    price: Money(cents: $0.price.cents, currency: Currency("EUR")))
            },
            mechanics: next.mechanics)
        let refused = try await contract.changes([.applyCatalog(euros)])[0]
        #expect(refused.failure?.code == .invalidCatalog)
        try await contract.change(.cancel(open.id, reason: nil))
        try await contract.change(.cancel(repriced.id, reason: nil))
        let switched = try await contract.change(.applyCatalog(euros))
        #expect(switched.events.map(\.type) == ["catalog.applied"])
        #expect(try await contract.store.catalog().currency == Currency("EUR"))
    }

    @Test(
        "a name another process added is found in the store by a daemon whose catalog is older, on a shared store",
        arguments: StoreFactory.all)
    func namesAreLookedUpInTheStore(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 1))
        let quote = try await contract.submit()
        try await contract.change(.addMechanic(name: "Nia Quill", skill: .master))
        // `contract.catalog` is the one before: a daemon that has not heard of the change yet.
        let shared = Rulebook(sharedStore: true)
        let booked = try await shared.apply(
            [.book(quote.id, mechanic: "Nia Quill")], catalog: contract.catalog, to: contract.store,
            at: contract.clock.now
        )[0]
        #expect(try booked.get().changedQuote.mechanic?.name == "Nia Quill")
        // A submission under an idempotency key naming them is checked in the store too, and a
        // retry of it is answered with its quote.
        let keyed = QuoteCommand.submit(
            Contract.submission(mechanic: "Nia Quill"), idempotencyKey: "nia-1", book: false)
        let first = try await shared.apply(
            [keyed], catalog: contract.catalog, to: contract.store, at: contract.clock.now)[0]
        #expect(try first.get().changedQuote.request.preferredMechanic?.name == "Nia Quill")
        let retry = try await shared.apply(
            [keyed], catalog: contract.catalog, to: contract.store, at: contract.clock.now)[0]
        #expect(try retry.get().replayed && retry.get().changedQuote.id == first.get().changedQuote.id)
        let unknown = try await shared.apply(
            [.book(quote.id, mechanic: "Nobody")], catalog: contract.catalog, to: contract.store, at: contract.clock.now
        )[0]
        #expect(unknown.failure?.code == .unknownMechanic)
        // Alone on its store, a daemon's catalog is the store's: an unknown name is refused at once.
        let alone = try await contract.apply([.book(quote.id, mechanic: "Nia Quill")])[0]
        #expect(alone.failure?.code == .unknownMechanic)
    }
}

extension Contract {
    /// Applies `commands` against the store's catalog of this moment, as a daemon that
    /// follows every change does.
    func changes(_ commands: [QuoteCommand]) async throws -> [Result<CommandOutcome, QuoteError>] {
        try await rules.apply(commands, catalog: try await store.catalog(), to: store, at: clock.now)
    }

    /// Applies one command that must succeed against the store's catalog of this moment.
    @discardableResult
    func change(_ command: QuoteCommand) async throws -> CommandOutcome {
        try await changes([command])[0].get()
    }

    /// A ready quote, not booked.
    func submit() async throws -> Quote {
        try await must(.submit(Contract.submission(), idempotencyKey: nil, book: false)).changedQuote
    }
}

extension RosterContractTests {
    @Test(
        "random bookings, duty changes, reassignments, additions and retirements never book anyone twice, off duty or retired",
        arguments: StoreFactory.all)
    func rosterChangesKeepTheRules(_ factory: StoreFactory) async throws {
        let services = ["Oil Change", "Brake Pad Replacement", "Timing Belt Replacement"]
        // Each step: what to do, a service, a mechanic (by position on the roster), which
        // quote, and how far the clock moves.
        let step = zip(
            Gen.int(in: 0...9), Gen.int(in: 0...2), Gen.int(in: 0...20), Gen.int(in: 0...100), Gen.int(in: 0...1)
        ).map { [$0, $1, $2, $3, $4] }
        await propertyCheck(count: 15, input: step.array(of: 20...60)) { steps in
            do {
                let catalog = try Catalog(
                    services: Catalog.standard.services,
                    mechanics: Catalog.standard.mechanics.filter { [1, 2, 4, 10].contains($0.id.rawValue) })
                let contract = try await Contract(factory, catalog: catalog)
                var added = 0
                for values in steps {
                    contract.clock.advance(seconds: Double(values[4]))
                    let roster = try await contract.store.mechanics()
                    let mechanic = roster.isEmpty ? nil : roster[values[2] % roster.count]
                    let quotes = try await contract.store.quotes(status: nil, afterID: nil, limit: 1_000)
                    let quote = quotes.isEmpty ? nil : quotes[values[3] % quotes.count]
                    let command: QuoteCommand
                    switch values[0] {
                    case 0, 1:
                        command = .submit(
                            Contract.submission([services[values[1]]]), idempotencyKey: nil, book: true, wait: true)
                    case 2:
                        guard let quote, let mechanic else { continue }
                        command = .book(quote.id, mechanic: mechanic.mechanic.name, wait: true)
                    case 3:
                        guard let quote else { continue }
                        command = .complete(quote.id)
                    case 4:
                        guard let quote else { continue }
                        command = .cancel(quote.id, reason: nil)
                    case 5, 6:
                        guard let mechanic else { continue }
                        command = .setDuty(mechanic: mechanic.mechanic.name, onDuty: !mechanic.onDuty)
                    case 7:
                        guard let quote else { continue }
                        command = .reassign(quote.id, mechanic: values[1] == 0 ? mechanic?.mechanic.name : nil)
                    case 8:
                        added += 1
                        command = .addMechanic(name: "Extra \(added)", skill: Skill.allCases[values[1] + 1])
                    default:
                        guard let mechanic, roster.count > 1 else { continue }
                        command = .retireMechanic(mechanic: mechanic.mechanic.name)
                    }
                    // Refusals are fine; what is applied must keep the rules.
                    _ = try await contract.changes([command])
                }
                let log = try await contract.log()
                #expect(doubleBookings(in: log).isEmpty, "\(doubleBookings(in: log))")
                #expect(bookingsOffDuty(in: log).isEmpty, "\(bookingsOffDuty(in: log))")
                #expect(log.map(\.seq) == Array(1...Int64(max(1, log.count))).prefix(log.count).map { $0 })
                #expect(try await contract.store.integrityViolations().isEmpty)
                // Everyone in line really waits, and no one waits for a mechanic off duty or retired.
                let onDuty = Set(try await contract.store.mechanics().filter(\.onDuty).map(\.mechanic.id))
                for waiting in try await contract.store.waitingQuotes(limit: 1_000) {
                    #expect(waiting.status == .waiting)
                    if let named = waiting.waitingFor { #expect(onDuty.contains(named.id), "\(named.name)") }
                }
            } catch {
                Issue.record(error)
            }
        }
    }
}

extension RosterContractTests {
    @Test(
        "the roster keeps one mechanic and its ids in bounds; a catalog applied tells the quotes waiting for a mechanic it retires or lowers",
        arguments: StoreFactory.all)
    func rosterBounds(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 2))
        try await contract.change(.retireMechanic(mechanic: "Junior 2"))
        let last = try await contract.changes([.retireMechanic(mechanic: "Junior 1")])[0]
        #expect(last.failure?.code == .invalidCatalog, "the last mechanic is replaced, not retired")
        #expect(try await contract.store.catalog().mechanics.map(\.name) == ["Junior 1"])

        // The largest id taken: no next one, refused rather than trapped.
        let services = contract.catalog.services
        let top = try Catalog(
            services: services,
            mechanics: [
                Mechanic(id: MechanicID(1), name: "Junior 1", skill: .junior),
                Mechanic(id: MechanicID.maximum, name: "Zed", skill: .master),
            ])
        try await contract.change(.applyCatalog(top))
        let full = try await contract.changes([.addMechanic(name: "Nia", skill: .junior)])[0]
        #expect(full.failure?.code == .invalidCatalog, "\(String(describing: full.failure))")
        #expect(throws: CatalogError.self) {
            _ = try Catalog(
                services: services,
                mechanics: [Mechanic(id: MechanicID(MechanicID.maximum.rawValue + 1), name: "Over", skill: .junior)])
        }

        // Waiting for Zed by name, for work only a master can do, then for Junior 1.
        let busy = try await contract.submitAndWait(["Timing Belt Replacement"]).changedQuote
        #expect(busy.mechanic?.name == "Zed")
        let forZed = try await contract.must(
            .submit(Contract.submission(["Timing Belt Replacement"]), idempotencyKey: nil, book: false)
        ).changedQuote
        try await contract.change(.book(forZed.id, mechanic: "Zed", wait: true))
        let holding = try await contract.submitAndWait().changedQuote
        #expect(holding.mechanic?.name == "Junior 1")
        let forJunior = try await contract.submit()
        try await contract.change(.book(forJunior.id, mechanic: "Junior 1", wait: true))

        // Zed lowered to junior and Junior 1 retired, in one catalog.
        let next = try Catalog(
            services: services,
            mechanics: [
                Mechanic(id: MechanicID.maximum, name: "Zed", skill: .junior),
                Mechanic(id: MechanicID(3), name: "Newcomer", skill: .junior),
            ])
        let applied = try await contract.change(.applyCatalog(next))
        let readied = applied.events.filter { $0.type == "quote.ready" }.compactMap(\.quote)
        #expect(Set(readied.map(\.id)) == [forZed.id, forJunior.id], "\(applied.events.map(\.type))")
        #expect(readied.first { $0.id == forZed.id }?.notice?.contains("can no longer do this work") == true)
        #expect(readied.first { $0.id == forJunior.id }?.notice?.contains("no longer works with us") == true)
        #expect(try await contract.store.waitingQuotes(limit: 10).isEmpty)
    }
}

extension RosterContractTests {
    @Test(
        "a retry under an idempotency key is answered with its quote after the catalog changed, whatever catalog its daemon checks it against",
        arguments: StoreFactory.all)
    func retriesOutliveCatalogChanges(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try StoreContractTests.catalog(juniors: 2))
        let before = try await contract.store.catalog()
        let shared = Rulebook(sharedStore: true)
        let keyed = QuoteCommand.submit(Contract.submission(mechanic: "Junior 2"), idempotencyKey: "j2-1", book: false)
        let original = try await shared.apply([keyed], catalog: before, to: contract.store, at: contract.clock.now)[0]
            .get().changedQuote
        // Junior 2 leaves the catalog: a submission naming them is now refused (not_in_catalog).
        let after = try Catalog(services: before.services, mechanics: before.mechanics.filter { $0.name != "Junior 2" })
        try await contract.change(.applyCatalog(after))
        let now = try await contract.store.catalog()
        for (label, catalog) in [("the catalog before", before), ("the catalog now", now)] {
            let retry = try await shared.apply([keyed], catalog: catalog, to: contract.store, at: contract.clock.now)[0]
            #expect(try retry.get().replayed && retry.get().changedQuote.id == original.id, "\(label)")
        }
        // Another submission under the key: a conflict, not a refusal for the catalog.
        let other = QuoteCommand.submit(
            Contract.submission(mechanic: "Junior 2", name: "Someone Else"), idempotencyKey: "j2-1", book: false)
        let conflict = try await shared.apply([other], catalog: now, to: contract.store, at: contract.clock.now)[0]
        #expect(conflict.failure?.code == .idempotencyConflict, "\(String(describing: conflict.failure))")
        // Without a key, it is refused for the catalog.
        let fresh = QuoteCommand.submit(Contract.submission(mechanic: "Junior 2"), idempotencyKey: nil, book: false)
        let refused = try await shared.apply([fresh], catalog: now, to: contract.store, at: contract.clock.now)[0]
        #expect(refused.failure?.code == .notInCatalog)
    }
}
