import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import TestSupport
import Testing

/// Support finds a customer's quotes by email address or name prefix, in every store.
@Suite("Every store finds a customer's quotes")
struct CustomerSearchContractTests {
    /// Quotes of four customers, some sharing a name's start or an address but for case.
    static let customers: [(name: String, email: String)] = [
        ("Jane Doe", "jane@example.com"), ("Janet Smith", "JANET@example.com"), ("jane doe", "Jane@Example.com"),
        ("Bob Jones", "bob@example.com"), ("Zoë Ångström", "zoe@example.com"), ("Janet Smith", "janet@other.org"),
    ]

    @Test(
        "a search by email is exact but for case, by name a prefix but for case, in id order and by page",
        arguments: StoreFactory.all)
    func findsExactlyTheCustomersQuotes(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        var ids: [QuoteID] = []
        for (name, email) in Self.customers + Self.customers {
            ids.append(
                try await contract.must(
                    .submit(Contract.submission(name: name, email: email), idempotencyKey: nil, book: false)
                ).changedQuote.id)
        }
        func found(_ text: String, after: QuoteID? = nil, limit: Int = 100) async throws -> [QuoteID] {
            let search = try #require(CustomerSearch(text))
            return try await contract.store.quotes(
                status: nil, customer: search, afterID: after, limit: limit, examining: 1_000
            ).quotes.map(\.id)
        }
        let indices = { (wanted: [Int]) in wanted.flatMap { [ids[$0], ids[$0 + 6]] }.sorted() }
        #expect(try await found("jane@example.com") == indices([0, 2]))
        #expect(try await found("JANE@EXAMPLE.COM") == indices([0, 2]))
        #expect(try await found("janet@example.com") == indices([1]))
        #expect(try await found("jan@example.com") == [], "an address is never a prefix")
        #expect(try await found("Jane") == indices([0, 1, 2, 5]))
        #expect(try await found("jane d") == indices([0, 2]))
        #expect(try await found("Janet Smith") == indices([1, 5]))
        #expect(try await found("Janet Smithe") == [])
        #expect(try await found("zoë å") == indices([4]), "letters beyond ASCII fold their case too")
        #expect(try await found("Zo") == indices([4]))
        #expect(try await found("a") == [], "a prefix of the name, not of any word in it")
        let firstPage = try await found("jane", limit: 3)
        #expect(firstPage == Array(indices([0, 1, 2, 5]).prefix(3)))
        #expect(try await found("jane", after: firstPage.last) == Array(indices([0, 1, 2, 5]).dropFirst(3)))
        let ready = try await contract.store.quotes(
            status: .ready, customer: CustomerSearch("bob@example.com"), afterID: nil, limit: 10, examining: 1_000)
        #expect(ready.quotes.map(\.id) == indices([3]))
        #expect(
            try await contract.store.quotes(
                status: .booked, customer: CustomerSearch("bob@example.com"), afterID: nil, limit: 10,
                examining: 1_000
            ).quotes.isEmpty)
    }
}

extension CustomerSearchContractTests {
    /// Every page of a search, followed by its cursor as a client follows `next`: the ids
    /// found, and the pages it took.
    static func allPages(
        _ store: any QuoteStore, _ text: String, status: QuoteStatus? = nil, limit: Int, examining: Int
    ) async throws -> (ids: [QuoteID], pages: [QuotePage]) {
        var ids: [QuoteID] = []
        var pages: [QuotePage] = []
        var after: QuoteID?
        while pages.count < 100 {
            let page = try await store.quotes(
                status: status, customer: CustomerSearch(text), afterID: after, limit: limit, examining: examining)
            pages.append(page)
            ids += page.quotes.map(\.id)
            #expect(page.quotes.count <= limit)
            guard let next = page.quotes.count == limit ? page.quotes.last?.id : page.examinedThrough else { break }
            after = next
        }
        return (ids, pages)
    }

    @Test(
        "a search examines a bounded number of quotes; one that stops early says where, and its pages find them all",
        arguments: StoreFactory.all)
    func boundedSearch(_ factory: StoreFactory) async throws {
        let contract = try await Contract(factory)
        // Ten of Ann's quotes among ten of others, then two of Zed's.
        var ids: [QuoteID] = []
        for index in 0..<20 {
            let name = index.isMultiple(of: 2) ? "Ann Lee" : "Other \(index)"
            ids.append(
                try await contract.must(
                    .submit(
                        Contract.submission(name: name, email: "shared@example.com"), idempotencyKey: nil, book: false)
                ).changedQuote.id)
        }
        for _ in 0..<2 {
            ids.append(
                try await contract.must(
                    .submit(
                        Contract.submission(name: "Zed", email: "zed@example.com"), idempotencyKey: nil, book: false)
                ).changedQuote.id)
        }
        let anns = stride(from: 0, to: 20, by: 2).map { ids[$0] }

        // A name few quotes match is found through its index, whole, however far it lies.
        let zed = try await contract.store.quotes(
            status: nil, customer: CustomerSearch("ze"), afterID: nil, limit: 10, examining: 4)
        #expect(zed.quotes.map(\.id) == [ids[20], ids[21]])
        #expect(zed.examinedThrough == nil)

        // More matches than may be examined: the quotes in id order, four at a time.
        let first = try await contract.store.quotes(
            status: nil, customer: CustomerSearch("ann"), afterID: nil, limit: 10, examining: 4)
        #expect(first.quotes.map(\.id) == [ids[0], ids[2]])
        #expect(first.examinedThrough == ids[3])
        let ann = try await Self.allPages(contract.store, "ann", limit: 3, examining: 4)
        #expect(ann.ids == anns)
        #expect(ann.pages.last?.examinedThrough == nil)

        // Which way is taken depends on the matches in all, not on those past the cursor
        // (counting those would read every match before it): one of Ann's left, by id order.
        let tail = try await contract.store.quotes(
            status: nil, customer: CustomerSearch("ann"), afterID: ids[17], limit: 10, examining: 4)
        #expect(tail.quotes.map(\.id) == [ids[18]])
        #expect(tail.examinedThrough == ids[21])

        // With a state, through the state's index, four at a time; and one that no quote is in.
        let ready = try await Self.allPages(contract.store, "ann", status: .ready, limit: 3, examining: 4)
        #expect(ready.ids == anns)
        #expect(ready.pages.first?.examinedThrough == ids[3])
        let booked = try await Self.allPages(contract.store, "ann", status: .booked, limit: 3, examining: 4)
        #expect(booked.ids.isEmpty)
        #expect(booked.pages.count == 1)

        // An address and a state: the address's quotes in id order, four at a time.
        let shared = try await Self.allPages(
            contract.store, "shared@example.com", status: .ready, limit: 100, examining: 4)
        let allReady = try await contract.store.quotes(status: .ready, afterID: nil, limit: 100).map(\.id)
        #expect(shared.ids == ids.prefix(20).filter(allReady.contains))
        #expect(shared.pages.count == 6, "20 quotes, 4 a page, and the last page to find none are left")
    }
}

@Suite("The PostgreSQL store's migrations")
struct PostgresMigrationTests {
    @Test("quotes stored before the customer columns are found by customer after the migration fills them in")
    func customerColumnsAreFilled() async throws {
        let database = try PostgresDatabase()
        let clock = TestClock()
        let store = try await database.open(catalog: .standard, clock: clock, retention: .init())
        let rules = Rulebook()
        let names = ["Jane Doe", "John Roe", "Jane Poe"]
        var ids: [QuoteID] = []
        for (index, name) in names.enumerated() {
            let submission = Contract.submission(name: name, email: "c\(index)@example.com")
            let outcome = try await rules.apply(
                [.submit(submission, idempotencyKey: nil, book: false)], catalog: .standard, to: store, at: clock.now)
            ids.append(try outcome[0].get().changedQuote.id)
        }
        // The database as it was before migration v4: no customer columns, v4 not applied.
        let name = try #require(database.url.split(separator: "/").last.map(String.init))
        _ = try PostgresCluster.start().sql(
            """
            ALTER TABLE quotes DROP COLUMN customer_email, DROP COLUMN customer_name;
            DELETE FROM quoted_migrations WHERE id LIKE 'v4:%';
            """, database: name)

        let migrated = try await database.open(catalog: .standard, clock: clock, retention: .init())
        let janes = try await migrated.quotes(
            status: nil, customer: CustomerSearch("jane"), afterID: nil, limit: 10, examining: 100)
        #expect(janes.quotes.map(\.id) == [ids[0], ids[2]])
        let john = try await migrated.quotes(
            status: nil, customer: CustomerSearch("C1@EXAMPLE.COM"), afterID: nil, limit: 10, examining: 100)
        #expect(john.quotes.map(\.id) == [ids[1]])
    }

    @Test(
        "a migration that waits for a lock another session holds gives up within seconds, naming it, and applies nothing"
    )
    func migrationGivesUpOnALock() async throws {
        let database = try PostgresDatabase()
        let clock = TestClock()
        _ = try await database.open(catalog: .standard, clock: clock, retention: .init())
        let name = try #require(database.url.split(separator: "/").last.map(String.init))
        let cluster = try PostgresCluster.start()
        _ = try cluster.sql(
            """
            ALTER TABLE quotes DROP COLUMN customer_email, DROP COLUMN customer_name;
            DELETE FROM quoted_migrations WHERE id LIKE 'v4:%';
            """, database: name)
        // Another session reads the quotes and keeps its transaction open.
        let holder = try cluster.session(
            "BEGIN; SELECT count(*) FROM quotes; SELECT pg_sleep(60); COMMIT;", database: name)
        defer {
            // Ended from the server's side: its session ends, and with it psql.
            _ = try? cluster.sql(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()"
            )
            #expect(holder.waitUntilExit(within: .seconds(30)))
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while try cluster.sql(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'quotes' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            database: name) == "0"
        {
            try #require(ContinuousClock.now < deadline, "the other session took its lock")
            try await Task.sleep(for: .milliseconds(20))
        }
        let started = ContinuousClock.now
        await #expect {
            _ = try await database.open(catalog: .standard, clock: clock, retention: .init())
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .migration && error.message.contains("v4:")
                && error.message.contains("another session holds a lock")
        }
        #expect(ContinuousClock.now - started < .seconds(20), "it gave up rather than wait for the session")
        #expect(
            try cluster.sql("SELECT count(*) FROM quoted_migrations WHERE id LIKE 'v4:%'", database: name) == "0",
            "nothing applied")
    }
}
