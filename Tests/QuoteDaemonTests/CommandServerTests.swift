import Configuration
import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteDaemon
import QuoteStoreSQLite
import ServiceLifecycle
import Synchronization
import Testing
import ZeroMQ

@Suite("The command server in process")
struct CommandServerTests {
    // Time limits guard against hangs only. They count from the test's start, and an async
    // test waits for a thread of the cooperative pool (two here) while the end-to-end tests'
    // blocking waits hold them: a whole run takes about two minutes, so three.
    @Test("it serves on port 0, answers, publishes, and stops through graceful shutdown", .timeLimit(.minutes(3)))
    func servesAndShutsDown() async throws {
        try await Self.withServer { endpoints, _ in
            #expect(endpoints.commands.hasPrefix("tcp://127.0.0.1:"))
            #expect(!endpoints.commands.hasSuffix(":*"))

            let reply = try Self.call(endpoints.commands, #"{"v":1,"op":"ping","id":7}"#)
            #expect(reply.contains(#""pong":true"#))
            #expect(reply.contains(#""id":7"#))
        }
    }

    @Test(
        "with batches of two, 600 pipelined requests are each answered once, in the order sent, and every event is published in sequence",
        .timeLimit(.minutes(3)))
    func smallBatchesKeepOrder() async throws {
        try await Self.withServer(["maxBatch": 2]) { endpoints, _ in
            let context = try Context()
            let subscriber = try Socket(context, type: .sub)
            try subscriber.set(.linger, 0)
            try subscriber.set(.receiveTimeout, 10_000)
            try subscriber.set(.subscribe, [])
            try subscriber.connect(endpoints.events)
            let dealer = try Socket(context, type: .dealer)
            try dealer.set(.linger, 0)
            try dealer.set(.receiveTimeout, 10_000)
            try dealer.connect(endpoints.commands)
            // A subscription takes effect some time after connecting: submit until one event
            // arrives, so that none of the burst's is missed.
            var probes = 0
            var heard = false
            while !heard {
                probes += 1
                _ = try dealer.send(multipart: [[], Array(Self.submit(id: "probe-\(probes)").utf8)])
                _ = try #require(try dealer.receiveMultipart())
                try subscriber.set(.receiveTimeout, 100)
                heard = try subscriber.receiveMultipart() != nil
            }
            try subscriber.set(.receiveTimeout, 10_000)
            // The probes' other events are still on their way; skip up to the burst's.
            let lastProbeSeq = Int64(probes * 2)

            let count = 600
            for index in 0..<count {
                let body = index % 3 == 2 ? #"{"v":1,"op":"ping","id":"r-\#(index)"}"# : Self.submit(id: "w-\(index)")
                _ = try dealer.send(multipart: [[], Array(body.utf8)])
            }
            var answered: [String] = []
            var quoteIDs: [Int64] = []
            for _ in 0..<count {
                let reply = try #require(try dealer.receiveMultipart())
                let object = try Self.object(try #require(reply.frames.last))
                answered.append(try #require(object["id"] as? String))
                if let quote = object["quote"] as? [String: Any], let id = quote["id"] as? Int {
                    quoteIDs.append(Int64(id))
                }
            }
            #expect(answered == (0..<count).map { $0 % 3 == 2 ? "r-\($0)" : "w-\($0)" })
            #expect(quoteIDs == quoteIDs.sorted() && Set(quoteIDs).count == quoteIDs.count)
            #expect(quoteIDs.count == count / 3 * 2)

            var seqs: [Int64] = []
            while seqs.count < quoteIDs.count * 2 {
                let event = try #require(try subscriber.receiveMultipart())
                let seq = Int64(try #require(try Self.object(event.frames[1])["seq"] as? Int))
                if seq > lastProbeSeq { seqs.append(seq) }
            }
            #expect(seqs == Array((lastProbeSeq + 1)...(lastProbeSeq + Int64(quoteIDs.count * 2))))
        }
    }

    @Test(
        "a batch that cannot commit stops the watchdog's notifications, and says why, until it commits",
        .timeLimit(.minutes(3)))
    func stalledStoreStopsTheWatchdog() async throws {
        let listener = try NotifyListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "40000"])
        var store = SQLiteQuoteStore.Configuration()
        store.busyTimeout = .seconds(120)
        try await Self.withServer(notifier: notifier, store: store, storeStallLimit: .milliseconds(300)) {
            endpoints, database in
            #expect(listener.read(until: { $0 == "WATCHDOG=1" }) != nil)
            // Another connection takes the write lock and keeps it: the next batch waits.
            var holding = GRDB.Configuration()
            holding.allowsUnsafeTransactions = true
            let blocker = try DatabaseQueue(path: database, configuration: holding)
            try blocker.inDatabase { db in try db.execute(sql: "BEGIN IMMEDIATE") }
            let context = try Context()
            let dealer = try Socket(context, type: .dealer)
            try dealer.set(.linger, 0)
            try dealer.set(.receiveTimeout, 30_000)
            try dealer.connect(endpoints.commands)
            _ = try dealer.send(multipart: [[], Array(Self.submit(id: "held").utf8)])
            // Past the limit, systemd hears why, and no longer that the daemon lives.
            #expect(listener.read(until: { $0.hasPrefix("STATUS=store stalled") }) != nil)
            try blocker.inDatabase { db in try db.execute(sql: "ROLLBACK") }
            // Released, the batch commits: the status comes back before the next notification.
            let resumed = try #require(listener.read(until: { $0 == "WATCHDOG=1" }))
            #expect(resumed.count == 2 && resumed.first?.hasPrefix("STATUS=listening") == true, "\(resumed)")
            let reply = try #require(try dealer.receiveMultipart())
            #expect(try Self.object(try #require(reply.frames.last))["ok"] as? Bool == true)
        }
    }

    /// Runs `body` against a server on free loopback ports with its own state, configured by
    /// `values`, with the path of its database, then shuts the server down gracefully.
    static func withServer(
        _ values: [AbsoluteConfigKey: ConfigValue] = [:], notifier: SystemdNotifier = .init(environment: [:]),
        store storeConfiguration: SQLiteQuoteStore.Configuration = .init(),
        storeStallLimit: Duration = CommandServer.defaultStoreStallLimit,
        _ body: (CommandServer.Endpoints, String) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var settings: [AbsoluteConfigKey: ConfigValue] = [
            "endpoint": "tcp://127.0.0.1:*", "events": "tcp://127.0.0.1:*",
            "stateDirectory": .init(.string(directory), isSecret: false),
        ]
        settings.merge(values) { $1 }
        let configuration = try DaemonConfiguration(reader: ConfigReader(provider: InMemoryProvider(values: settings)))
        let logger = Logger(label: "test.server")
        let store = try SQLiteQuoteStore(
            path: configuration.databasePath, catalog: .standard, configuration: storeConfiguration, logger: logger)
        let ready = AsyncStream<CommandServer.Endpoints>.makeStream()
        let server = CommandServer(
            configuration: configuration, store: store, catalog: LiveCatalog(.standard), logger: logger,
            notifier: notifier, storeStallLimit: storeStallLimit
        ) { endpoints in
            ready.continuation.yield(endpoints)
            ready.continuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ready.stream.makeAsyncIterator()
            let endpoints = try #require(await iterator.next())
            do {
                try await body(endpoints, configuration.databasePath)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// A valid submission, auto-priced, with request id `id`.
    static func submit(id: String) -> String {
        #"{"v":1,"op":"submit","id":"\#(id)","customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#
    }

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// One request over a fresh REQ socket, on a thread of its own (sockets block).
    static func call(_ endpoint: String, _ body: String) throws -> String {
        let context = try Context()
        let socket = try Socket(context, type: .req)
        try socket.set(.linger, 0)
        try socket.set(.receiveTimeout, 10_000)
        try socket.connect(endpoint)
        try socket.send(body)
        return try socket.receiveString() ?? ""
    }
}
