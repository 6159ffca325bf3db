import Foundation
import PropertyBased
import QuoteCore
import QuoteRules
import QuoteStore
import Synchronization
import TestSupport
import Testing

/// The promises every store keeps, checked through the real store and the rules that run on
/// it in production. A new store joins `StoreFactory.all` and must pass all of them.
@Suite("Every store keeps the contract")
struct StoreContractTests {
    @Test(
        "junior bookings go to Steve, Mike, Ali; the freed go first, longest free first; then an apprentice",
        arguments: StoreFactory.all)
    func dispatchOrder(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        var booked: [String: QuoteID] = [:]
        for expected in ["Steve Brimington", "Mike Fulton", "Ali Bellevue"] {
            contract.clock.advance(seconds: 1)
            let (quote, mechanic) = try await contract.book()
            #expect(mechanic?.name == expected)
            booked[expected] = quote
        }
        contract.clock.advance(seconds: 1)
        try await contract.must(.complete(try #require(booked["Mike Fulton"])))
        contract.clock.advance(seconds: 1)
        try await contract.must(.complete(try #require(booked["Steve Brimington"])))
        contract.clock.advance(seconds: 1)
        #expect(try await contract.book().1?.name == "Mike Fulton", "free the longest goes first")
        #expect(try await contract.book().1?.name == "Steve Brimington")
        #expect(try await contract.book().1?.name == "Dick Duchess", "no junior free: the least skilled above")
        #expect(
            try await contract.book(["Brake Pad Replacement"]).1?.name == "Shane Inglewood",
            "apprentice work never goes to a junior")
        #expect(try await contract.book(["Timing Belt Replacement"]).1?.name == "Zane Marine")
    }

    @Test(
        "a backlog larger than one prune is pruned whole, keeping what the retention promises",
        arguments: StoreFactory.all)
    func pruningABacklog(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, retention: EventRetention(minimumAge: .seconds(60), minimumCount: 4))
        // Past five batches of 1,000 rows (a submission's two events are one row).
        let submissions = 5_100
        let results = try await contract.apply(
            Array(repeating: .submit(Contract.submission(), idempotencyKey: nil, book: false), count: submissions))
        #expect(results.allSatisfy { $0.failure == nil })
        let last = try await contract.store.lastSequence()
        #expect(try await contract.store.pruneEvents(now: contract.clock.now) == 0, "too young to prune")
        contract.clock.advance(seconds: 120)
        #expect(try await contract.store.pruneEvents(now: contract.clock.now, batch: 1_000) == submissions * 2 - 4)
        #expect(try await contract.store.events(after: 0, limit: 100).map(\.seq) == Array((last - 3)...last))
    }

    @Test(
        "the customer's mechanic is booked when free and able; when busy, the dispatch order decides",
        arguments: StoreFactory.all)
    func preferredMechanic(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        #expect(try await contract.book(mechanic: "Joe Murphy").1?.name == "Joe Murphy")
        #expect(try await contract.book(mechanic: "Joe Murphy").1?.name == "Steve Brimington")
        // Named at booking time, a busy mechanic is a refusal, not a fallback.
        let ready = try await contract.must(
            .submit(Contract.submission(), idempotencyKey: nil, book: false)
        ).changedQuote.id
        let refused = try await contract.apply([.book(ready, mechanic: "Joe Murphy")])[0]
        #expect(refused.failure?.code == .mechanicBusy)
        let unable = try await contract.must(
            .submit(Contract.submission(["Timing Belt Replacement"]), idempotencyKey: nil, book: false)
        ).changedQuote.id
        #expect(try await contract.apply([.book(unable, mechanic: "Mike Fulton")])[0].failure?.code == .cannotPerform)
    }

    @Test(
        "random bookings, completions and cancellations always claim the mechanic an independent model of the dispatch order picks",
        arguments: StoreFactory.all)
    func dispatchMatchesTheModel(_ factory: StoreFactory) async throws {
        let services = ["Oil Change", "Brake Pad Replacement", "Timing Belt Replacement"]
        let names = [nil, "Joe Murphy", "Steve Brimington", "Dick Duchess"]
        // Each step: what to do (0-1 submit and book, 2 complete, 3 cancel), a service, a
        // preferred mechanic, which booked quote, and how far the clock moves (0: a tie).
        let step = zip(
            Gen.int(in: 0...3), Gen.int(in: 0...2), Gen.int(in: 0...3), Gen.int(in: 0...100), Gen.int(in: 0...2)
        ).map { [$0, $1, $2, $3, $4] }
        await propertyCheck(count: 30, input: step.array(of: 10...60)) { steps in
            do {
                let contract = try await Contract(factory)
                var model = DispatchModel(contract.catalog, since: Date(timeIntervalSince1970: 0))
                var booked: [QuoteID] = []
                for values in steps {
                    contract.clock.advance(seconds: Double(values[4]))
                    switch values[0] {
                    case 0, 1:
                        let service = services[values[1]]
                        let preferred = names[values[2]]
                        let submission = Contract.submission([service], mechanic: preferred)
                        guard
                            let request = try? CheckedSubmission(
                                submission, in: contract.catalog, at: contract.clock.now
                            ).request
                        else {
                            // A preferred mechanic unable to do the work: refused before the store.
                            let refused = try await contract.apply([
                                .submit(submission, idempotencyKey: nil, book: true)
                            ])
                            #expect(refused[0].failure?.code == .notInCatalog)
                            continue
                        }
                        let expected = model.pick(for: request)
                        let outcome = try await contract.must(.submit(submission, idempotencyKey: nil, book: true))
                        #expect(
                            try outcome.changedQuote.mechanic?.id == expected?.id,
                            "\(service), preferring \(preferred ?? "no one")")
                        if let mechanic = try outcome.changedQuote.mechanic {
                            model.claim(mechanic.id, by: try outcome.changedQuote.id)
                            booked.append(try outcome.changedQuote.id)
                        } else {
                            #expect(outcome.bookingError?.code == .noMechanicAvailable)
                        }
                    default:
                        guard !booked.isEmpty else { continue }
                        let quote = booked.remove(at: values[3] % booked.count)
                        try await contract.must(values[0] == 2 ? .complete(quote) : .cancel(quote, reason: nil))
                        model.release(heldBy: quote, at: contract.clock.now)
                    }
                }
                let held = try await contract.store.mechanics().filter { !$0.isFree }.map(\.mechanic.id)
                #expect(Set(held) == model.busy)
                #expect(try await contract.store.integrityViolations().isEmpty)
            } catch {
                Issue.record(error)
            }
        }
    }

    @Test(
        "the same idempotency key with the same submission returns the original quote, with another is a conflict, and neither creates anything",
        arguments: StoreFactory.all)
    func idempotentSubmission(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        let first = try await contract.must(.submit(Contract.submission(), idempotencyKey: "k-1", book: true))
        let last = try await contract.store.lastSequence()
        let results = try await contract.apply([
            .submit(Contract.submission(), idempotencyKey: "k-1", book: true),
            .submit(Contract.submission(name: "Someone Else"), idempotencyKey: "k-1", book: true),
            .submit(Contract.submission(["Oil Change", ""]), idempotencyKey: "k-1", book: false),
            .submit(Contract.submission(), idempotencyKey: "k-1", book: false),
        ])
        let again = try results[0].get()
        #expect(again.replayed)
        #expect(again.quote == first.quote)
        #expect(again.events.isEmpty)
        for conflict in results.dropFirst() {
            #expect(conflict.failure?.code == .idempotencyConflict)
        }
        #expect(try await contract.store.quote(idempotencyKey: "k-1") == first.quote)
        #expect(try await contract.store.lastSequence() == last)
        #expect(try await contract.store.counts().values.reduce(0, +) == 1)
        #expect(try await contract.store.mechanics().filter { !$0.isFree }.count == 1)
    }

    @Test(
        "a key repeated in one batch is answered with the quote stored earlier in it, and a replay takes no quote id, event number or mechanic",
        arguments: StoreFactory.all)
    func keyRepeatedInOneBatch(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        let earlier = try await contract.must(.submit(Contract.submission(), idempotencyKey: "before", book: true))
        let before = try await contract.store.lastSequence()
        let results = try await contract.apply([
            // First in its transaction: the store has not read its last id and number yet.
            .submit(Contract.submission(), idempotencyKey: "before", book: true),
            .submit(Contract.submission(), idempotencyKey: "twice", book: true),
            .submit(Contract.submission(), idempotencyKey: "twice", book: true),
            .submit(Contract.submission(name: "Someone Else"), idempotencyKey: "twice", book: false),
            .submit(Contract.submission(), idempotencyKey: nil, book: false),
        ])
        let replayed = try results[0].get()
        #expect(replayed.replayed)
        #expect(replayed.quote == earlier.quote)
        let first = try results[1].get()
        #expect(!first.replayed)
        #expect(first.quote?.status == .booked)
        let again = try results[2].get()
        #expect(again.replayed)
        #expect(again.quote == first.quote)
        #expect(again.events.isEmpty)
        #expect(results[3].failure?.code == .idempotencyConflict)
        let ids = try [earlier, first, results[4].get()].map { try $0.changedQuote.id.rawValue }
        #expect(ids == [ids[0], ids[0] + 1, ids[0] + 2])
        let returned = results.flatMap { (try? $0.get().events) ?? [] }
        #expect(returned.map(\.seq) == Array((before + 1)...(before + Int64(returned.count))))
        #expect(try await contract.store.events(after: before, limit: 100) == returned)
        #expect(try await contract.store.quote(idempotencyKey: "twice") == first.quote)
        #expect(try await contract.store.counts().values.reduce(0, +) == 3)
        #expect(try await contract.store.mechanics().filter { !$0.isFree }.count == 2)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test(
        "a long batch of submissions is answered as if each were written alone: keys taken before it or in it are replays, a quote submitted in it can be booked in it, and nothing is numbered twice",
        arguments: StoreFactory.all)
    func longBatchOfSubmissions(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        let earlier = try await contract.must(.submit(Contract.submission(), idempotencyKey: "before", book: false))
        let first = try earlier.changedQuote.id.rawValue + 1
        let before = try await contract.store.lastSequence()
        var commands: [QuoteCommand] = (0..<20).map { index in
            .submit(Contract.submission(), idempotencyKey: index % 3 == 0 ? "k\(index)" : nil, book: false)
        }
        // Taken before the batch, after twenty new rows; taken in it; a new quote booked.
        commands.append(.submit(Contract.submission(), idempotencyKey: "before", book: false))
        commands.append(.submit(Contract.submission(), idempotencyKey: "k3", book: false))
        commands.append(.book(QuoteID(first + 1), mechanic: nil))
        commands += (0..<5).map { _ in .submit(Contract.submission(), idempotencyKey: nil, book: false) }
        commands.append(.submit(Contract.submission(name: "Someone Else"), idempotencyKey: "k18", book: false))
        let results = try await contract.apply(commands)
        let outcomes = try results[..<20].map { try $0.get() }
        #expect(outcomes.map { $0.quote?.id.rawValue } == (0..<20).map { first + Int64($0) })
        #expect(outcomes.allSatisfy { !$0.replayed && $0.quote?.status == .ready })
        #expect(try results[20].get().replayed)
        #expect(try results[20].get().quote == earlier.quote)
        #expect(try results[21].get().replayed)
        #expect(try results[21].get().quote == outcomes[3].quote)
        #expect(try results[22].get().quote?.status == .booked)
        #expect(try results[23...27].map { try $0.get().quote?.id.rawValue } == (20..<25).map { first + Int64($0) })
        #expect(results[28].failure?.code == .idempotencyConflict)
        let returned = results.flatMap { (try? $0.get().events) ?? [] }
        #expect(returned.map(\.seq) == Array((before + 1)...(before + Int64(returned.count))))
        #expect(try await contract.store.events(after: before, limit: 200) == returned)
        #expect(try await contract.store.quote(idempotencyKey: "k18") == outcomes[18].quote)
        #expect(try await contract.store.quote(QuoteID(first + 24))?.quote.id == QuoteID(first + 24))
        #expect(try await contract.store.counts().values.reduce(0, +) == 26)
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test(
        "refused commands leave no trace in their batch, and the accepted ones are numbered without a gap",
        arguments: StoreFactory.all)
    func refusalsLeaveNoTrace(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try Self.catalog(juniors: 1))
        let ready = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
            .changedQuote
        let held = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: true)).changedQuote
        let before = try await contract.store.lastSequence()
        let results = try await contract.apply([
            .complete(ready.id),  // not booked
            .submit(Contract.submission(), idempotencyKey: "new", book: true),  // recorded, nobody free
            .book(ready.id, mechanic: nil),  // nobody free
            .book(QuoteID(999), mechanic: nil),  // no such quote
            .cancel(held.id, reason: "changed plans"),  // frees the junior
            .book(ready.id, mechanic: "Junior 1"),  // and takes them
            .resolve(ready.id, Resolution(price: Money(cents: 100))),  // not pending
            .submit(Contract.submission(), idempotencyKey: nil, book: true),  // nobody free again
        ])
        #expect(
            results.map { $0.failure?.code } == [
                .illegalTransition, nil, .noMechanicAvailable, .unknownQuote, nil, nil, .illegalTransition, nil,
            ])
        #expect(try results[1].get().bookingError?.code == .noMechanicAvailable)
        #expect(try results[1].get().changedQuote.status == .ready)
        let returned = results.flatMap { (try? $0.get().events) ?? [] }
        #expect(returned.map(\.seq) == Array((before + 1)...(before + Int64(returned.count))))
        #expect(try await contract.store.events(after: before, limit: 100) == returned)
        #expect(try await contract.store.quote(ready.id)?.quote.mechanic?.name == "Junior 1")
        #expect(try await contract.store.integrityViolations().isEmpty)
    }

    @Test("a database a newer quoted migrated is refused, naming its migration", arguments: StoreFactory.all)
    func newerSchemaIsRefused(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: false))
        try contract.database.record(migration: "v99: from a later quoted")
        let refusal = await #expect(throws: StoreError.self) {
            _ = try await contract.another()
        }
        #expect(refusal?.code == .migration)
        #expect(refusal?.message.contains("v99: from a later quoted") == true)
    }

    @Test("a transaction that fails applies nothing and hands back its numbers", arguments: StoreFactory.all)
    func failedTransactionAppliesNothing(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: true))
        let last = try await contract.store.lastSequence()
        let checked = try CheckedSubmission(Contract.submission(), in: contract.catalog, at: contract.clock.now)
        let failure = await #expect(throws: StoreError.self) {
            _ = try await contract.store.write { transaction throws(StoreError) in
                _ = try await contract.rules.applyBatch(
                    requests: [CheckedRequest(.submit(checked, idempotencyKey: "lost", book: true), by: .anonymous)],
                    catalog: .standard, in: transaction
                ).results
                throw StoreError(.database, "injected after the writes")
            }
        }
        #expect(failure?.message == "injected after the writes")
        #expect(try await contract.store.quote(idempotencyKey: "lost") == nil)
        #expect(try await contract.store.lastSequence() == last)
        #expect(try await contract.store.mechanics().filter { !$0.isFree }.count == 1)
        let next = try await contract.must(.submit(Contract.submission(), idempotencyKey: "kept", book: false))
        #expect(try next.changedQuote.id == QuoteID(2))
        #expect(next.events.map(\.seq) == [last + 1, last + 2])
    }

    @Test(
        "a savepoint rolled back undoes its rows, claims, events and ids; one released keeps them",
        arguments: StoreFactory.all)
    func savepoints(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        let checked = try CheckedSubmission(Contract.submission(), in: contract.catalog, at: contract.clock.now)
        let rules = contract.rules
        let committed = try await contract.store.write { transaction throws(StoreError) in
            try await transaction.savepoint()
            let first = try await rules.applyBatch(
                requests: [CheckedRequest(.submit(checked, idempotencyKey: "a", book: true), by: .anonymous)],
                catalog: .standard, in: transaction
            ).results
            try await transaction.savepoint()
            let second = try await rules.applyBatch(
                requests: [CheckedRequest(.submit(checked, idempotencyKey: "b", book: true), by: .anonymous)],
                catalog: .standard, in: transaction
            ).results
            try await transaction.rollbackToSavepoint()
            try await transaction.releaseSavepoint()
            return (try? first[0].get(), try? second[0].get())
        }
        let (kept, undone) = committed.value
        var a = try #require(kept)
        let b = try #require(undone)
        for index in a.events.indices { a.events[index].seq += committed.sequenceOffset }
        #expect(try b.changedQuote.id == QuoteID(2), "the undone command had taken the next id")
        #expect(try await contract.store.quote(idempotencyKey: "b") == nil)
        #expect(try await contract.store.quote(idempotencyKey: "a") == a.quote)
        #expect(try await contract.log() == a.events)
        #expect(try await contract.store.mechanics().filter { !$0.isFree }.map(\.quote) == [a.changedQuote.id])
        let next = try await contract.must(.submit(Contract.submission(), idempotencyKey: "c", book: true))
        #expect(try next.changedQuote.id == QuoteID(2), "an id undone is handed out again")
        #expect(next.events.first?.seq == (a.events.last?.seq ?? 0) + 1, "the log stays gap-free")
    }

    @Test(
        "racing writers on separate handles never book one mechanic twice, and the log stays gap-free",
        arguments: StoreFactory.all)
    func racingWriters(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory, catalog: try Self.catalog(juniors: 3))
        let writers = 6
        let rounds = 40
        let claimed = Mutex<[(QuoteID, MechanicID)]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                let store = try await contract.another()
                group.addTask { @Sendable in
                    for _ in 0..<rounds {
                        let outcome = try await contract.apply(
                            [.submit(Contract.submission(), idempotencyKey: nil, book: true)], on: store)[0].get()
                        guard let mechanic = try outcome.changedQuote.mechanic else { continue }
                        let id = try outcome.changedQuote.id
                        claimed.withLock { $0.append((id, mechanic.id)) }
                        _ = try await contract.apply([.complete(outcome.changedQuote.id)], on: store)[0].get()
                    }
                }
            }
            try await group.waitForAll()
        }
        let log = try await contract.log()
        #expect(log.map(\.seq) == Array(1...Int64(log.count)))
        #expect(doubleBookings(in: log).isEmpty)
        #expect(claimed.withLock { $0.count } > 0)
        #expect(try await contract.store.integrityViolations().isEmpty)
        #expect(try await contract.store.mechanics().allSatisfy(\.isFree))
        #expect(try await contract.store.counts().values.reduce(0, +) == writers * rounds)
    }

    @Test(
        "the log replays exactly what the commands returned, and each quote's history names its events",
        arguments: StoreFactory.all)
    func replay(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        var returned: [StoredEvent] = []
        var quotes: [QuoteID] = []
        for index in 0..<12 {
            contract.clock.advance(seconds: 1)
            let outcome = try await contract.must(
                .submit(Contract.submission(), idempotencyKey: "r\(index)", book: index % 2 == 0))
            returned += outcome.events
            quotes.append(try outcome.changedQuote.id)
            if index % 3 == 0 {
                returned += try await contract.must(.cancel(outcome.changedQuote.id, reason: nil)).events
            }
        }
        let pending = try await contract.must(
            .submit(Contract.submission(["Oil Change", "Wash the Dog"]), idempotencyKey: nil, book: false))
        returned += pending.events
        returned += try await contract.must(.resolve(pending.changedQuote.id, Resolution(price: Money(cents: 4_200))))
            .events
        var read: [StoredEvent] = []
        while case let page = try await contract.store.events(after: read.last?.seq ?? 0, limit: 5), !page.isEmpty {
            read += page
        }
        #expect(read == returned)
        #expect(try await contract.store.lastSequence() == returned.last?.seq)
        for id in try quotes + [pending.changedQuote.id] {
            let record = try #require(try await contract.store.quote(id))
            let announced = returned.filter { if case .quote(_, let quote) = $0.kind { quote.id == id } else { false } }
            #expect(record.history.map(\.seq) == announced.map(\.seq))
            #expect(
                record.history.map(\.to)
                    == announced.map { if case .quote(_, let q) = $0.kind { q.status } else { .submitted } })
        }
    }

    @Test(
        "a mechanic dropped from the catalog is never picked nor claimed, keeps a claim in hand, and works again once back",
        arguments: StoreFactory.all)
    func catalogSync(_ factory: StoreFactory) async throws {
        let two = try Self.catalog(juniors: 2)
        let contract = try await Contract(factory, catalog: two)
        let (held, mechanic) = try await contract.book()
        #expect(mechanic?.name == "Junior 1")
        let one = try Catalog(services: two.services, mechanics: [two.mechanics[0]])
        try await contract.store.syncCatalog(one)
        #expect(try await contract.store.mechanics().map(\.mechanic.name) == ["Junior 1"])
        let waiting = try await contract.must(.submit(Contract.submission(), idempotencyKey: nil, book: true))
        #expect(try waiting.changedQuote.status == .ready, "Junior 2 is gone and Junior 1 busy")
        // Named by a catalog snapshot taken before the change, the store still refuses the claim.
        #expect(
            try await contract.apply([.book(waiting.changedQuote.id, mechanic: "Junior 2")])[0].failure?.code
                == .unknownMechanic)
        contract.clock.advance(seconds: 1)
        try await contract.must(.complete(held))
        try await contract.store.syncCatalog(two)
        // Back, Junior 2 has been free the longest (never booked); Junior 1 since a second ago.
        #expect(
            try await contract.must(.book(waiting.changedQuote.id, mechanic: nil)).changedQuote.mechanic?.name
                == "Junior 2")
        #expect(try await contract.book().1?.name == "Junior 1")
    }

    /// The standard services with `juniors` junior mechanics, named "Junior 1"...
    static func catalog(juniors: Int) throws -> Catalog {
        try Catalog(
            services: Catalog.standard.services,
            mechanics: (1...juniors).map { Mechanic(id: MechanicID(Int64($0)), name: "Junior \($0)", skill: .junior) })
    }
}

/// An in-memory statement of the dispatch order, independent of any store: who is free since
/// when, and whom a booking should get.
struct DispatchModel {
    private let mechanics: [Mechanic]
    private var freeSince: [MechanicID: Date]
    private var holder: [QuoteID: MechanicID] = [:]

    init(_ catalog: Catalog, since: Date) {
        mechanics = catalog.mechanics
        freeSince = Dictionary(uniqueKeysWithValues: catalog.mechanics.map { ($0.id, since) })
    }

    var busy: Set<MechanicID> { Set(holder.values) }

    /// The customer's mechanic if free and able, else the first free able one in `DispatchOrder`.
    func pick(for request: QuoteRequest) -> Mechanic? {
        let required = request.requiredSkill
        if let preferred = request.preferredMechanic, preferred.skill >= required, freeSince[preferred.id] != nil {
            return preferred
        }
        return mechanics.filter { $0.skill >= required && freeSince[$0.id] != nil }.min { lhs, rhs in
            DispatchOrder.precedes(
                (lhs.skill, freeSince[lhs.id]!, lhs.id), (rhs.skill, freeSince[rhs.id]!, rhs.id))
        }
    }

    mutating func claim(_ mechanic: MechanicID, by quote: QuoteID) {
        freeSince[mechanic] = nil
        holder[quote] = mechanic
    }

    mutating func release(heldBy quote: QuoteID, at date: Date) {
        guard let mechanic = holder.removeValue(forKey: quote) else { return }
        freeSince[mechanic] = date
    }
}
