import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite
import Synchronization
import Testing

@Suite("Racing writers on one file")
struct RaceTests {
    @Test(
        "16 writers booking 2,000 quotes over 10 mechanics never double-book, and every booking is logged",
        .timeLimit(.minutes(5)))
    func concurrentWritersNeverDoubleBook() async throws {
        let directory = TemporaryDirectory()
        let catalog = try StoreFixtures.catalog(mechanics: 10)
        // Create the schema once, so the writers race on data, not on migration.
        _ = try StoreFixtures.open(directory.database, catalog: catalog)

        let writers = 16
        let quotesPerWriter = 125
        let bookings = Mutex<[(QuoteID, MechanicID)]>([])
        let failures = Mutex<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask { @Sendable in
                    do {
                        // Each writer has its own connections, as a separate process would.
                        let store = try StoreFixtures.open(directory.database, catalog: catalog)
                        for index in 0..<quotesPerWriter {
                            let key = "w\(writer)-\(index)"
                            let submitted = try await store.apply(
                                [.submit(StoreFixtures.submission(), idempotencyKey: key, book: true)], catalog: catalog
                            )[0].get()
                            var quote = submitted.quote
                            if index % 10 == 9 {
                                // Some are cancelled before they are ever booked, or while booked.
                                _ = try await store.apply(
                                    [.cancel(quote.id, reason: "changed plans")], catalog: catalog)[
                                        0
                                    ].get()
                                if let mechanic = quote.mechanic {
                                    bookings.withLock { $0.append((quote.id, mechanic.id)) }
                                }
                                continue
                            }
                            while quote.status != .booked {
                                switch try await store.apply([.book(quote.id, mechanic: nil)], catalog: catalog)[0] {
                                case .success(let outcome): quote = outcome.quote
                                case .failure(let error) where error.code == .noMechanicAvailable: await Task.yield()
                                case .failure(let error): throw error
                                }
                            }
                            bookings.withLock { $0.append((quote.id, quote.mechanic!.id)) }
                            let finish: QuoteCommand =
                                index % 3 == 0 ? .cancel(quote.id, reason: nil) : .complete(quote.id)
                            _ = try await store.apply([finish], catalog: catalog)[0].get()
                        }
                    } catch {
                        failures.withLock { $0.append("writer \(writer): \(error)") }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])

        let store = try StoreFixtures.open(directory.database, catalog: catalog)
        #expect(try await store.integrityViolations().isEmpty)
        let counts = try await store.counts()
        #expect((counts[.completed] ?? 0) + (counts[.cancelled] ?? 0) == writers * quotesPerWriter)
        #expect(try await store.mechanics().allSatisfy(\.isFree))

        let events = try await store.events(after: 0, limit: 1_000_000)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)), "the log is gap-free")
        #expect(doubleBookings(in: events).isEmpty)
        var logged: Set<[Int64]> = []
        for event in events {
            if case .mechanicBusy(let mechanic, let quote) = event.kind {
                logged.insert([quote.rawValue, mechanic.id.rawValue])
            }
        }
        let succeeded = bookings.withLock { $0 }
        #expect(succeeded.count >= writers * quotesPerWriter * 9 / 10)
        #expect(succeeded.allSatisfy { logged.contains([$0.0.rawValue, $0.1.rawValue]) })
    }
}
