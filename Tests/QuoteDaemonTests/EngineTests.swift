import Configuration
import Foundation
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

    var currentCatalog: Catalog { store.currentCatalog }
    func updateCatalog(_ catalog: Catalog) throws(StoreError) { try store.updateCatalog(catalog) }
    func apply(_ commands: [StoreCommand]) throws(StoreError) -> [Result<CommandOutcome, QuoteError>] {
        throw StoreError(.database, "disk I/O error (injected)")
    }
    func quote(_ id: QuoteID) throws(StoreError) -> QuoteRecord? { try store.quote(id) }
    func quotes(status: QuoteStatus?, afterID: QuoteID?, limit: Int) throws(StoreError) -> [Quote] {
        try store.quotes(status: status, afterID: afterID, limit: limit)
    }
    func mechanics() throws(StoreError) -> [MechanicState] { try store.mechanics() }
    func counts() throws(StoreError) -> [QuoteStatus: Int] { try store.counts() }
    func events(after: Int64, limit: Int) throws(StoreError) -> [StoredEvent] {
        try store.events(after: after, limit: limit)
    }
    func lastSequence() throws(StoreError) -> Int64 { try store.lastSequence() }
    func pruneEvents(now: Date) throws(StoreError) -> Int { try store.pruneEvents(now: now) }
    func integrityViolations() throws(StoreError) -> [IntegrityViolation] { try store.integrityViolations() }
    func repairIntegrity() throws(StoreError) -> [IntegrityViolation] { try store.repairIntegrity() }
}

@Suite("The engine")
struct EngineTests {
    @Test(
        "when the store cannot commit, every write in the batch gets storage_error, reads are still answered, and nothing is published"
    )
    func storageErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engine-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = try DaemonConfiguration(
            reader: ConfigReader(
                provider: InMemoryProvider(values: ["stateDirectory": .init(.string(directory), isSecret: false)])))
        let logger = Logger(label: "test.engine")
        let real = try SQLiteQuoteStore(path: configuration.databasePath, catalog: .standard, logger: logger)
        let engine = Engine(store: FailingCommits(store: real), configuration: configuration, logger: logger)

        let submit =
            #"{"v":1,"op":"submit","id":"w1","customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#
        let frames: [Multipart] = [
            Multipart(frames: [Array("client-a".utf8), [], Array(submit.utf8)]),
            Multipart(frames: [Array("client-b".utf8), [], Array(#"{"v":1,"op":"ping","id":"r1"}"#.utf8)]),
            Multipart(frames: [Array("client-c".utf8), [], Array(#"{"v":1,"op":"cancel","id":"w2","quoteId":1}"#.utf8)]
            ),
        ]
        let output = engine.handle(frames)

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
        #expect(try real.counts().values.reduce(0, +) == 0, "nothing was written")
        #expect(try real.lastSequence() == 0)
    }
}
