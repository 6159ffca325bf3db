import Configuration
import Foundation
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
    @Test("it serves on port 0, answers, publishes, and stops through graceful shutdown", .timeLimit(.minutes(1)))
    func servesAndShutsDown() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = try DaemonConfiguration(
            reader: ConfigReader(
                provider: InMemoryProvider(values: [
                    "endpoint": "tcp://127.0.0.1:*", "events": "tcp://127.0.0.1:*",
                    "stateDirectory": .init(.string(directory), isSecret: false),
                ])))
        let logger = Logger(label: "test.server")
        let store = try SQLiteQuoteStore(path: configuration.databasePath, catalog: .standard, logger: logger)
        let ready = AsyncStream<CommandServer.Endpoints>.makeStream()
        let server = CommandServer(configuration: configuration, store: store, logger: logger) { endpoints in
            ready.continuation.yield(endpoints)
            ready.continuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [server], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ready.stream.makeAsyncIterator()
            let endpoints = try #require(await iterator.next())
            #expect(endpoints.commands.hasPrefix("tcp://127.0.0.1:"))
            #expect(!endpoints.commands.hasSuffix(":*"))

            let reply = try Self.call(endpoints.commands, #"{"v":1,"op":"ping","id":7}"#)
            #expect(reply.contains(#""pong":true"#))
            #expect(reply.contains(#""id":7"#))

            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
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
