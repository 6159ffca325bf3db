import Configuration
import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteStore
import QuoteStoreSQLite
import QuoteWire
import Testing
import ZeroMQ

@testable import QuoteDaemon

/// The real SQLite store for everything but commits, which fail as a full disk or a broken
/// file would make them: a fake, for this unit test only (the failure cannot be provoked on
/// demand in the real store).
struct FailingCommits: QuoteStore {
    let store: SQLiteQuoteStore

    func write<T: Sendable>(
        _ body: @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T> {
        throw StoreError(.database, "disk I/O error (injected)")
    }
    func syncCatalog(_ catalog: Catalog) async throws(StoreError) { try await store.syncCatalog(catalog) }
    func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord? { try await store.quote(id) }
    func quote(idempotencyKey: String) async throws(StoreError) -> Quote? {
        try await store.quote(idempotencyKey: idempotencyKey)
    }
    func quotes(status: QuoteStatus?, afterID: QuoteID?, limit: Int) async throws(StoreError) -> [Quote] {
        try await store.quotes(status: status, afterID: afterID, limit: limit)
    }
    func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote] { try await store.waitingQuotes(limit: limit) }
    func mechanics() async throws(StoreError) -> [MechanicState] { try await store.mechanics() }
    func counts() async throws(StoreError) -> [QuoteStatus: Int] { try await store.counts() }
    func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await store.events(after: after, limit: limit)
    }
    func lastSequence() async throws(StoreError) -> Int64 { try await store.lastSequence() }
    func pruneEvents(now: Date) async throws(StoreError) -> Int { try await store.pruneEvents(now: now) }
    func integrityViolations() async throws(StoreError) -> [IntegrityViolation] {
        try await store.integrityViolations()
    }
}

/// A fresh state directory and the daemon configuration that uses it, removed afterwards.
final class StateDirectory {
    let path: String
    let configuration: DaemonConfiguration

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        configuration = try DaemonConfiguration(
            reader: ConfigReader(
                provider: InMemoryProvider(values: ["stateDirectory": .init(.string(path), isSecret: false)])))
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("The engine")
struct EngineTests {
    @Test(
        "when the store cannot commit, every write in the batch gets storage_error, reads are still answered, and nothing is published"
    )
    func storageErrors() async throws {
        let state = try StateDirectory()
        defer { withExtendedLifetime(state) {} }
        let configuration = state.configuration
        let logger = Logger(label: "test.engine")
        let real = try SQLiteQuoteStore(path: configuration.databasePath, catalog: .standard, logger: logger)
        let engine = Engine(
            store: FailingCommits(store: real), catalog: LiveCatalog(.standard), configuration: configuration,
            logger: logger)

        let submit =
            #"{"v":1,"op":"submit","id":"w1","customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#
        let frames: [Multipart] = [
            Multipart(frames: [Array("client-a".utf8), [], Array(submit.utf8)]),
            Multipart(frames: [Array("client-b".utf8), [], Array(#"{"v":1,"op":"ping","id":"r1"}"#.utf8)]),
            Multipart(frames: [Array("client-c".utf8), [], Array(#"{"v":1,"op":"cancel","id":"w2","quoteId":1}"#.utf8)]
            ),
        ]
        let output = await engine.handle(frames)

        #expect(output.events.isEmpty)
        #expect(output.replies.count == 3)
        let codec = WireCodec()
        let replies = try output.replies.map { try codec.decode(WireReply.self, from: try #require($0.last)) }
        #expect(
            output.replies.map { $0.first.map { String(decoding: $0, as: UTF8.self) } } == [
                "client-a", "client-b", "client-c",
            ])
        #expect(replies[0].ok == false && replies[0].error?.code == .storageError)
        #expect(replies[1].ok == true && replies[1].pong == true)
        #expect(replies[2].ok == false && replies[2].error?.code == .storageError)
        #expect(replies[0].error?.message.contains("retry") == true)
        #expect(try await real.counts().values.reduce(0, +) == 0, "nothing was written")
        #expect(try await real.lastSequence() == 0)
    }

    @Test(
        "a batch of only invalid submissions is answered without opening a write transaction, while another process holds the write lock"
    )
    func invalidSubmissionsNeverWait() async throws {
        let state = try StateDirectory()
        defer { withExtendedLifetime(state) {} }
        let configuration = state.configuration
        let logger = Logger(label: "test.engine")
        var storeConfiguration = SQLiteQuoteStore.Configuration()
        storeConfiguration.busyTimeout = .milliseconds(300)
        let store = try SQLiteQuoteStore(
            path: configuration.databasePath, catalog: .standard, configuration: storeConfiguration, logger: logger)
        let engine = Engine(store: store, catalog: LiveCatalog(.standard), configuration: configuration, logger: logger)

        // Another process's connection takes the write lock and keeps it: any write
        // transaction of the store would wait for it, then fail with storage_error.
        let locked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = try DatabaseQueue(path: configuration.databasePath)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? holder.inDatabase { db in
                try db.inTransaction(.immediate) {
                    locked.signal()
                    release.wait()
                    return .rollback
                }
            }
            finished.signal()
        }.start()
        locked.wait()
        defer {
            release.signal()
            finished.wait()
        }

        let invalid = [
            #"{"v":1,"op":"submit","id":"a","customer":{"name":"Ann","email":"bad"},"services":["Oil Change"]}"#,
            #"{"v":1,"op":"submit","id":"b","idempotencyKey":"k-b","car":{"make":"Honda"},"services":[]}"#,
            #"{"v":1,"op":"book","id":"c","quoteId":1,"mechanic":"Nobody At All"}"#,
        ]
        let output = await engine.handle(
            invalid.enumerated().map {
                Multipart(frames: [Array("client-\($0.offset)".utf8), [], Array($0.element.utf8)])
            })
        let codec = WireCodec()
        let codes = try output.replies.map { try codec.decode(WireReply.self, from: try #require($0.last)).error?.code }
        #expect(codes.map { $0?.rawValue } == ["invalid_submission", "invalid_submission", "unknown_mechanic"])
        #expect(output.events.isEmpty)

        // The control: a valid submission does need the lock, and cannot have it.
        let valid =
            #"{"v":1,"op":"submit","id":"d","customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#
        let blocked = await engine.handle([Multipart(frames: [Array("client-d".utf8), [], Array(valid.utf8)])])
        let reply = try codec.decode(WireReply.self, from: try #require(blocked.replies.first?.last))
        #expect(reply.error?.code == .storageError)
    }
}
