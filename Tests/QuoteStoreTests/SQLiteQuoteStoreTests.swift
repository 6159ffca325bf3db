import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite
import Synchronization
import TestSupport
import Testing

@Suite("The SQLite store")
struct SQLiteQuoteStoreTests {
    let directory = TemporaryDirectory()

    @Test("a new file is migrated and a reopened one keeps its quotes and catalog state")
    func migrateAndReopen() async throws {
        do {
            let store = try StoreFixtures.open(directory.database)
            #expect(try await store.counts().values.reduce(0, +) == 0)
            #expect(try await store.mechanics().count == 10)
            let results = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "a", book: true)])
            #expect(try results[0].get().changedQuote.status == .booked)
        }
        let reopened = try StoreFixtures.open(directory.database)
        #expect(try await reopened.counts()[.booked] == 1)
        #expect(try await reopened.mechanics().filter { !$0.isFree }.count == 1)
        #expect(try await reopened.integrityViolations().isEmpty)
    }

    @Test(
        "the connection that commits fsyncs as configured (GRDB's WAL set-up once overrode it)",
        arguments: [(true, "full"), (false, "normal")])
    func writerIsDurable(full: Bool, pragma: String) async throws {
        var configuration = SQLiteQuoteStore.Configuration()
        configuration.synchronousFull = full
        let store = try SQLiteQuoteStore(
            path: directory.database, catalog: .standard, configuration: configuration, logger: StoreFixtures.logger)
        #expect(try store.writerSynchronous() == pragma)
    }

    @Test("quotes by state, once counted, are kept by each commit, and match a count of the table")
    func countsAreKept() async throws {
        let catalog = try StoreFixtures.catalog(mechanics: 1)
        let store = try StoreFixtures.open(directory.database, catalog: catalog)
        #expect(try await store.counts().values.reduce(0, +) == 0)
        let rules = Rulebook(maximumWaiting: 1)
        func apply(_ commands: [QuoteCommand]) async throws -> [Result<CommandOutcome, QuoteError>] {
            try await rules.apply(commands, catalog: catalog, to: store)
        }
        let wait = QuoteCommand.submit(StoreFixtures.submission(), idempotencyKey: nil, book: true, wait: true)
        // Booked, waiting, and one refused its place in a full line (undone in a savepoint).
        let first = try await apply([
            wait, wait, wait, .submit(StoreFixtures.submission(trim: nil), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
        ])
        #expect(try first.map { try $0.get().changedQuote.status } == [.booked, .waiting, .ready, .pending, .ready])
        let booked = try first[0].get().changedQuote.id
        let ready = try first[2].get().changedQuote.id
        // A stored quote put in the full line: moved to waiting, then undone in a savepoint.
        let refused = try await apply([
            .book(ready, mechanic: nil, wait: true),
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
        ])
        #expect((try? refused[0].get()) == nil)
        // Completed, which serves the line; one cancelled; one refused outright.
        let second = try await apply([.complete(booked), .cancel(ready, reason: nil), .cancel(ready, reason: nil)])
        #expect((try? second[2].get()) == nil)
        let kept = try await store.counts()
        #expect(
            kept[.completed] == 1 && kept[.booked] == 1 && kept[.cancelled] == 1 && kept[.pending] == 1
                && kept[.ready] == 2 && kept[.waiting] == 0, "\(kept)")
        let counted = try await StoreFixtures.open(directory.database, catalog: catalog).counts()
        #expect(kept == counted)
    }

    @Test("a store opened through a symbolic link to its file acknowledges its writes")
    func openedThroughALink() async throws {
        do {
            let store = try StoreFixtures.open(directory.database)
            _ = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: false)])
        }
        let link = directory.path + "/link.sqlite"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.database)
        let store = try StoreFixtures.open(link)
        for key in ["first", "second"] {
            let results = try await store.apply([
                .submit(StoreFixtures.submission(), idempotencyKey: key, book: false)
            ])
            #expect(try results[0].get().changedQuote.status == .ready)
        }
        #expect(try await store.counts().values.reduce(0, +) == 3)
    }

    @Test("the same idempotency key returns the original quote and creates nothing")
    func idempotentSubmission() async throws {
        let store = try StoreFixtures.open(directory.database)
        let first = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "key-1", book: false)])[
            0
        ]
        .get()
        let lastSeq = try await store.lastSequence()
        let results = try await store.apply([
            .submit(StoreFixtures.submission(), idempotencyKey: "key-1", book: false),
            .submit(StoreFixtures.submission(name: "Someone Else"), idempotencyKey: "key-1", book: false),
        ])
        #expect(results[1].failure?.code == .idempotencyConflict)
        let again = try results[0].get()
        #expect(again.replayed)
        #expect(again.quote == first.quote)
        #expect(again.events.isEmpty)
        #expect(try await store.lastSequence() == lastSeq)
        #expect(try await store.counts().values.reduce(0, +) == 1)
    }

    @Test("an invalid submission is refused with every problem and writes nothing")
    func invalidSubmissionWritesNothing() async throws {
        let store = try StoreFixtures.open(directory.database)
        let results = try await store.apply([.submit(Submission(), idempotencyKey: "bad", book: true)])
        #expect(results[0].failure?.code == .invalidSubmission)
        #expect(results[0].failure?.problems.count == 3)
        #expect(try await store.lastSequence() == 0)
        // The key was not used up by the failed attempt.
        #expect(
            try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "bad", book: false)])[0].get()
                .replayed
                == false)
    }

    @Test("booking refuses a busy mechanic, an unable one, an unknown one, and no-one left, changing nothing")
    func claimErrors() async throws {
        let catalog = try StoreFixtures.catalog(mechanics: 2)
        let store = try StoreFixtures.open(directory.database, catalog: catalog)
        let apply = { (commands: [QuoteCommand]) async throws(StoreError) in
            try await store.apply(commands, catalog: catalog)
        }
        let submitted = try await apply([
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(services: ["Timing Belt Replacement"]), idempotencyKey: nil, book: false),
        ]).map { try $0.get().changedQuote.id }

        #expect(
            try await apply([.book(submitted[0], mechanic: "Mechanic 1")])[0].get().changedQuote.mechanic?.name
                == "Mechanic 1"
        )
        let before = try await store.lastSequence()
        let results = try await apply([
            .book(submitted[1], mechanic: "Mechanic 1"),
            .book(submitted[3], mechanic: "Mechanic 2"),
            .book(submitted[1], mechanic: "Nobody"),
            .book(QuoteID(999), mechanic: nil),
            .book(submitted[3], mechanic: nil),
        ])
        #expect(
            results.map { $0.failure?.code } == [
                .mechanicBusy, .cannotPerform, .unknownMechanic, .unknownQuote, .noMechanicAvailable,
            ])
        #expect(try await store.lastSequence() == before, "refused commands append no event")
        #expect(try await store.mechanics().first { $0.mechanic.name == "Mechanic 2" }?.isFree == true)

        #expect(
            try await apply([.book(submitted[1], mechanic: nil)])[0].get().changedQuote.mechanic?.name == "Mechanic 2")
        let none = try await apply([.book(submitted[2], mechanic: nil)])
        #expect(none[0].failure?.code == .noMechanicAvailable)
        let twice = try await apply([.book(submitted[0], mechanic: nil)])
        #expect(twice[0].failure?.code == .illegalTransition)
    }

    @Test("completing and cancelling release the mechanic in the same transaction", arguments: ["complete", "cancel"])
    func releaseOnFinish(how: String) async throws {
        let catalog = try StoreFixtures.catalog(mechanics: 1)
        let store = try StoreFixtures.open(directory.database, catalog: catalog)
        let apply = { (commands: [QuoteCommand]) async throws(StoreError) in
            try await store.apply(commands, catalog: catalog)
        }
        let booked = try await apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: true)])[0].get()
        #expect(try booked.changedQuote.status == .booked)
        #expect(booked.events.map(\.type) == ["quote.submitted", "quote.ready", "quote.booked", "mechanic.busy"])
        #expect(try await store.mechanics()[0].isFree == false)

        let command: QuoteCommand =
            try how == "complete" ? .complete(booked.changedQuote.id) : .cancel(booked.changedQuote.id, reason: "test")
        let finished = try await apply([command])[0].get()
        #expect(try finished.changedQuote.status == (how == "complete" ? .completed : .cancelled))
        #expect(try finished.events.map(\.type) == ["quote.\(finished.changedQuote.status)", "mechanic.free"])
        let mechanic = try await store.mechanics()[0]
        #expect(mechanic.isFree)
        #expect(mechanic.freeSince != nil)
        #expect(try await store.integrityViolations().isEmpty)
        if how == "complete" { #expect(try finished.changedQuote.receipt?.mechanic.name == "Mechanic 1") }
    }

    @Test("a batch applies its good commands and refuses its bad ones, each on its own")
    func mixedBatch() async throws {
        let store = try StoreFixtures.open(directory.database)
        let results = try await store.apply([
            .submit(StoreFixtures.submission(), idempotencyKey: "ok-1", book: false),
            .submit(Submission(customer: .init(name: "Nope")), idempotencyKey: "bad-1", book: false),
            .submit(StoreFixtures.submission(trim: nil), idempotencyKey: "pending-1", book: false),
            .complete(QuoteID(1)),
            .book(QuoteID(1), mechanic: "Joe Murphy"),
            .resolve(QuoteID(2), Resolution(price: Money(cents: 6_625))),
        ])
        #expect(try results[0].get().changedQuote.status == .ready)
        #expect(results[1].failure?.code == .invalidSubmission)
        #expect(try results[2].get().changedQuote.status == .pending)
        #expect(results[3].failure?.code == .illegalTransition)
        #expect(try results[4].get().changedQuote.mechanic?.name == "Joe Murphy")
        #expect(try results[5].get().changedQuote.price == Money(cents: 6_625))

        let events = try await store.events(after: 0, limit: 100)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)), "gap-free despite the refused commands")
        let all = results.compactMap { try? $0.get() }.flatMap(\.events)
        #expect(all.map(\.seq) == events.map(\.seq))
    }

    @Test("events stay ordered and gap-free across restarts, and history follows each quote")
    func eventsAcrossRestarts() async throws {
        var ids: [QuoteID] = []
        for round in 0..<3 {
            let store = try StoreFixtures.open(directory.database)
            let outcome = try await store.apply([
                .submit(StoreFixtures.submission(), idempotencyKey: "r\(round)", book: true)
            ]
            )[0].get()
            ids.append(try outcome.changedQuote.id)
            _ = try await store.apply([.complete(outcome.changedQuote.id)])
        }
        let store = try StoreFixtures.open(directory.database)
        let events = try await store.events(after: 0, limit: 1_000)
        #expect(events.count == 18)
        #expect(events.map(\.seq) == Array(1...18))
        #expect(try await store.events(after: 10, limit: 3).map(\.seq) == [11, 12, 13])
        let record = try #require(try await store.quote(ids[1]))
        #expect(record.history.map(\.to) == [.submitted, .ready, .booked, .completed])
        #expect(record.history.first?.from == nil)
        #expect(record.quote.receipt != nil)
        #expect(doubleBookings(in: events).isEmpty)
    }

    @Test(
        "the log reads back exactly the events the commands returned, wherever a page ends",
        arguments: [1, 2, 3, 100])
    func logReadsBackAsReturned(pageSize: Int) async throws {
        let store = try StoreFixtures.open(directory.database)
        let results = try await store.apply([
            .submit(StoreFixtures.submission(), idempotencyKey: nil, book: true),
            .submit(StoreFixtures.submission(trim: nil), idempotencyKey: nil, book: false),
            .submit(StoreFixtures.submission(name: "Second"), idempotencyKey: nil, book: false),
        ])
        let ready = try results[2].get().changedQuote.id
        let booking = try await store.apply([.book(ready, mechanic: nil)])[0].get().events
        let completed = booking + (try await store.apply([.complete(ready)])[0].get().events)
        let returned = try results.flatMap { try $0.get().events } + completed
        var read: [StoredEvent] = []
        while let page = Optional(try await store.events(after: read.last?.seq ?? 0, limit: pageSize)), !page.isEmpty {
            read += page
        }
        #expect(read == returned)
        #expect(read.filter { if case .quote(nil, _) = $0.kind { true } else { false } }.count == 3)
    }

    /// A store that keeps the last four events and those younger than an hour, on `clock`.
    private func storeKeepingFour(clock: TestClock) throws -> SQLiteQuoteStore {
        var configuration = SQLiteQuoteStore.Configuration()
        configuration.retention = EventRetention(minimumAge: .seconds(3_600), minimumCount: 4)
        return try SQLiteQuoteStore(
            path: directory.database, catalog: .standard, configuration: configuration, logger: StoreFixtures.logger,
            clock: clock.now)
    }

    @Test("pruning keeps what the retention promises and never reuses a sequence number")
    func pruning() async throws {
        let clockBox = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store = try storeKeepingFour(clock: clockBox)
        for index in 0..<5 {
            _ = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "p\(index)", book: false)])
        }
        #expect(try await store.lastSequence() == 10)
        #expect(try await store.pruneEvents(now: clockBox.now()) == 0, "too young to prune")
        clockBox.advance(by: 7_200)
        #expect(try await store.pruneEvents(now: clockBox.now()) == 6, "all but the last four")
        #expect(try await store.events(after: 0, limit: 100).map(\.seq) == [7, 8, 9, 10])
        _ = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: "p-next", book: false)])
        #expect(try await store.events(after: 10, limit: 100).map(\.seq) == [11, 12])
    }

    @Test("a backlog larger than one prune transaction is pruned whole, a batch at a time")
    func pruningInBatches() async throws {
        let clockBox = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let store = try storeKeepingFour(clock: clockBox)
        let submissions = 2_100
        _ = try await store.apply(
            Array(repeating: .submit(StoreFixtures.submission(), idempotencyKey: nil, book: false), count: submissions))
        let last = Int64(submissions * 2)
        #expect(try await store.lastSequence() == last)
        clockBox.advance(by: 7_200)
        // One row a submission: past two batches of 1,000 rows.
        #expect(
            try await store.pruneEvents(now: clockBox.now(), batch: 1_000) == submissions * 2 - 4,
            "past two batches: all but four")
        #expect(try await store.events(after: 0, limit: 100).map(\.seq) == Array((last - 3)...last))
    }

    @Test("a log pruned empty still numbers its next event after the last one, across a restart")
    func pruningEverything() async throws {
        let clockBox = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        var configuration = SQLiteQuoteStore.Configuration()
        configuration.retention = EventRetention(minimumAge: .seconds(3_600), minimumCount: 0)
        func open() throws -> SQLiteQuoteStore {
            try SQLiteQuoteStore(
                path: directory.database, catalog: .standard, configuration: configuration,
                logger: StoreFixtures.logger, clock: clockBox.now)
        }
        do {
            let store = try open()
            for index in 0..<3 {
                _ = try await store.apply([
                    .submit(StoreFixtures.submission(), idempotencyKey: "e\(index)", book: false)
                ])
            }
            clockBox.advance(by: 7_200)
            #expect(try await store.pruneEvents(now: clockBox.now()) == 6)
            #expect(try await store.events(after: 0, limit: 100).isEmpty)
            #expect(try await store.lastSequence() == 6)
        }
        let reopened = try open()
        #expect(try await reopened.lastSequence() == 6)
        let next = try await reopened.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: false)])[0]
            .get()
        #expect(next.events.map(\.seq) == [7, 8])
        #expect(try await reopened.events(after: 0, limit: 100).map(\.seq) == [7, 8])
    }

    @Test("lists page by state and counts add up")
    func listsAndCounts() async throws {
        let store = try StoreFixtures.open(directory.database)
        for index in 0..<7 {
            _ = try await store.apply([
                .submit(StoreFixtures.submission(trim: index % 2 == 0 ? "EX" : nil), idempotencyKey: nil, book: false)
            ])
        }
        let counts = try await store.counts()
        #expect(counts[.ready] == 4)
        #expect(counts[.pending] == 3)
        let firstPage = try await store.quotes(status: .ready, afterID: nil, limit: 3)
        #expect(firstPage.map(\.id.rawValue) == [1, 3, 5])
        let secondPage = try await store.quotes(status: .ready, afterID: firstPage.last?.id, limit: 3)
        #expect(secondPage.map(\.id.rawValue) == [7])
        #expect(try await store.quotes(status: nil, afterID: nil, limit: 100).count == 7)
    }

    @Test("a quote reads back exactly as it was written, in every state")
    func quotesRoundTrip() async throws {
        let store = try StoreFixtures.open(directory.database)
        var submission = StoreFixtures.submission(
            services: ["Oil Change", "strange noise"], trim: nil, mechanic: "Joe Murphy")
        submission.coupon = "WELCOME10"
        var outcomes = [try await store.apply([.submit(submission, idempotencyKey: "rt", book: false)])[0].get()]
        let id = try outcomes[0].changedQuote.id
        outcomes.append(
            try await store.apply([.resolve(id, Resolution(car: .init(trim: "LE"), price: Money(cents: 6_625)))])[0]
                .get())
        outcomes.append(try await store.apply([.book(id, mechanic: nil)])[0].get())
        outcomes.append(try await store.apply([.complete(id)])[0].get())
        let cancelled = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: true)])[0]
            .get()
            .changedQuote.id
        outcomes.append(try await store.apply([.cancel(cancelled, reason: "no longer needed")])[0].get())
        for outcome in outcomes {
            let events = try await store.events(after: outcome.events.first!.seq - 1, limit: outcome.events.count)
            #expect(events == outcome.events, "events read back as written")
        }
        #expect(try await store.quote(id)?.quote == outcomes[3].quote)
        #expect(try await store.quote(cancelled)?.quote == outcomes[4].quote)
        #expect(try await store.quotes(status: .completed, afterID: nil, limit: 10) == [outcomes[3].quote])
    }

    @Test(
        "a catalog row of the wrong type is a corrupt store, not a crash",
        arguments: [
            "UPDATE services SET price_cents = 'x'", "UPDATE catalog_version SET version = 'v'",
            "UPDATE coupons SET percent_off = 'ten'",
        ])
    func corruptCatalogRow(change: String) async throws {
        _ = try StoreFixtures.open(directory.database)
        try tamper(directory.database) { db in
            if change.contains("coupons") {
                try db.execute(sql: "INSERT INTO coupons (code, percent_off) VALUES ('TAMPER', 10)")
            }
            try db.execute(sql: change)
        }
        #expect(throws: StoreError.self) { try StoreFixtures.open(directory.database) }
    }

    @Test("the integrity check reports a tampered claim and the explicit repair fixes it")
    func integrityRepair() async throws {
        let store = try StoreFixtures.open(directory.database)
        let booked = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: true)])[0]
            .get()
        let completed = try await store.apply([.submit(StoreFixtures.submission(), idempotencyKey: nil, book: true)])[0]
            .get()
        _ = try await store.apply([.complete(completed.changedQuote.id)])
        // Off duty, the first quote's mechanic keeps its work: the repair gives it back to them.
        let offDuty = try #require(try booked.changedQuote.mechanic)
        _ = try await store.apply([.setDuty(mechanic: offDuty.name, onDuty: false)])
        #expect(try await store.integrityViolations().isEmpty)
        try tamper(directory.database) { db in
            // Free the first quote's mechanic behind the store's back, and make the completed
            // quote's mechanic busy again.
            try db.execute(
                sql: "UPDATE mechanics SET quote_id = NULL, free_since = 0 WHERE quote_id = ?",
                arguments: [booked.changedQuote.id.rawValue])
            try db.execute(
                sql: "UPDATE mechanics SET quote_id = ?, free_since = NULL WHERE id = ?",
                arguments: [try completed.changedQuote.id.rawValue, try completed.changedQuote.mechanic?.id.rawValue])
        }
        let reopened = try StoreFixtures.open(directory.database)
        #expect(try await reopened.integrityViolations().count == 2)
        let violations = try await reopened.integrityViolations()
        #expect(try await Rulebook().repair(violations, catalog: .standard, in: reopened).count == 2)
        #expect(try await reopened.integrityViolations().isEmpty)
        let held = try await reopened.mechanics().first { $0.mechanic.id == offDuty.id }
        #expect(try held?.quote == booked.changedQuote.id && held?.onDuty == false)
    }
}

/// A settable clock for retention tests.
final class TestClock: Sendable {
    private let state: LockedDate
    init(_ start: Date) { state = LockedDate(start) }
    func now() -> Date { state.get() }
    func advance(by seconds: TimeInterval) { state.advance(seconds) }
}

final class LockedDate: Sendable {
    private let date: Mutex<Date>
    init(_ date: Date) { self.date = Mutex(date) }
    func get() -> Date { date.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
