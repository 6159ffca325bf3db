import Foundation
import QuoteCore
import QuoteStore
import QuoteStoreSQLite
import ServiceLifecycle
import Testing

@Suite("Background checkpoints")
struct CheckpointServiceTests {
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Opens a store in `directory` with background checkpoints every `pages` and the writer's
    /// at `writerPages`, and submits 1,000 quotes in five batches; returns it with the size the
    /// database file had before the writes.
    static func storeAfterWrites(
        in directory: TemporaryDirectory, pages: Int, writerPages: Int
    ) async throws -> (store: SQLiteQuoteStore, sizeBefore: Int) {
        var configuration = SQLiteQuoteStore.Configuration()
        configuration.backgroundCheckpointPages = pages
        configuration.writerCheckpointPages = writerPages
        let store = try SQLiteQuoteStore(
            path: directory.database, catalog: .standard, configuration: configuration, logger: StoreFixtures.logger)
        let before = size(directory.database)
        for batch in 0..<5 {
            let results = try await store.apply(
                (0..<200).map {
                    .submit(StoreFixtures.submission(name: "Customer \(batch)-\($0)"), idempotencyKey: nil, book: false)
                })
            #expect(results.allSatisfy { (try? $0.get()) != nil })
        }
        return (store, before)
    }

    /// The nice value in a `/proc/.../stat` file: its 19th field, counted past the
    /// parenthesized name, which may hold spaces.
    static func niceness(of statPath: String) -> Int32? {
        guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 16 ? Int32(fields[16]) : nil
    }

    /// The nice value of this process's thread named `name`, if there is one.
    static func niceness(ofThreadNamed name: String) -> Int32? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            if comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name {
                return niceness(of: "/proc/self/task/\(task)/stat")
            }
        }
        return nil
    }

    // Time limits guard against hangs only. They count from the test's start, and an async
    // test waits for a thread of the cooperative pool (two here) while the end-to-end tests'
    // blocking waits hold them: a whole run takes about two minutes, so three.
    @Test(
        "the checkpoint service copies the log into the database file that the writer leaves alone",
        .timeLimit(.minutes(3)))
    func copiesTheLog() async throws {
        let directory = TemporaryDirectory()
        let (store, before) = try await Self.storeAfterWrites(in: directory, pages: 16, writerPages: 0)
        #expect(Self.size(directory.database) == before, "the writer checkpointed by itself")
        #expect(Self.size(directory.database + "-wal") > 0)

        // The writes above grew the log past 16 pages, so the trigger is already set.
        let service = try #require(store.checkpointService(logger: StoreFixtures.logger))
        let group = ServiceGroup(configuration: .init(services: [service], logger: StoreFixtures.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // The condition: the log's pages have reached the database file (polled: a file
            // grows without notice), within a deadline rather than for ever.
            let deadline = ContinuousClock.now + .seconds(30)
            while Self.size(directory.database) == before {
                try #require(ContinuousClock.now < deadline, "the checkpointer never copied the log")
                try await Task.sleep(for: .milliseconds(5))
            }
            #if os(Linux)
                // It runs below the process's other threads.
                let checkpointer = try #require(Self.niceness(ofThreadNamed: "quoted-ckpt"))
                let own = try #require(Self.niceness(of: "/proc/thread-self/stat"))
                #expect(checkpointer == min(19, own + CheckpointService.niceness))
            #endif
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(Self.size(directory.database) > before)
        #expect(try await store.counts()[.ready] == 1_000)
        let reopened = try StoreFixtures.open(directory.database)
        #expect(try await reopened.counts()[.ready] == 1_000)
    }

    @Test(
        "with background checkpoints on and no service running, the writer still checkpoints past its threshold",
        .timeLimit(.minutes(3)))
    func writerBackstop() async throws {
        let directory = TemporaryDirectory()
        let (store, before) = try await Self.storeAfterWrites(in: directory, pages: 1_000_000, writerPages: 8)
        // The hook replaced SQLite's wal_autocheckpoint; the writer's checkpoint is its job now.
        #expect(Self.size(directory.database) > before, "the writer never checkpointed")
        #expect(try await store.counts()[.ready] == 1_000)
    }
}
