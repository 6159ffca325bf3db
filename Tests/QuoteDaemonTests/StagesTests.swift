import Configuration
import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite
import QuoteWire
import Synchronization
import Testing

@testable import QuoteDaemon

/// The real SQLite store for everything but commits, which fail as a full disk or a broken
/// file would make them: a fake, for this unit test only (the failure cannot be provoked on
/// demand in the real store).
struct FailingCommits: QuoteStore {
    let store: SQLiteQuoteStore
    /// Whether each commit fails as it is written, so that it may have been applied.
    var outcomeUnknown = false
    /// How each commit fails.
    var code = StoreError.Code.database
    /// Whether reads of a quote or of the last seq fail as a server out of reach would.
    var readsFail = false
    /// How many reads of a quote or of the last seq reached the store.
    let reads = ReadCount()

    func write<T: Sendable>(
        _ body: nonisolated(nonsending) @escaping @Sendable (any StoreTransaction) async throws(StoreError) -> T
    ) async throws(StoreError) -> Committed<T> {
        throw StoreError(code, "disk I/O error (injected)", outcomeUnknown: outcomeUnknown)
    }
    func syncCatalog(_ catalog: Catalog) async throws(StoreError) { try await store.syncCatalog(catalog) }
    func catalog() async throws(StoreError) -> Catalog { try await store.catalog() }
    func quote(_ id: QuoteID) async throws(StoreError) -> QuoteRecord? {
        reads.add()
        if readsFail { throw StoreError(.unavailable, "no route to host (injected)") }
        return try await store.quote(id)
    }
    func quote(idempotencyKey: String) async throws(StoreError) -> Quote? {
        try await store.quote(idempotencyKey: idempotencyKey)
    }
    func quotes(
        status: QuoteStatus?, customer: CustomerSearch?, afterID: QuoteID?, limit: Int, examining: Int
    ) async throws(StoreError) -> QuotePage {
        try await store.quotes(status: status, customer: customer, afterID: afterID, limit: limit, examining: examining)
    }
    func waitingQuotes(limit: Int) async throws(StoreError) -> [Quote] { try await store.waitingQuotes(limit: limit) }
    func longestWaitingSince() async throws(StoreError) -> Date? { try await store.longestWaitingSince() }
    func mechanics() async throws(StoreError) -> [MechanicState] { try await store.mechanics() }
    func mechanicCounts() async throws(StoreError) -> MechanicCounts { try await store.mechanicCounts() }
    func counts() async throws(StoreError) -> [QuoteStatus: Int] { try await store.counts() }
    func events(after: Int64, limit: Int) async throws(StoreError) -> [StoredEvent] {
        try await store.events(after: after, limit: limit)
    }
    func lastSequence() async throws(StoreError) -> Int64 {
        reads.add()
        if readsFail { throw StoreError(.unavailable, "no route to host (injected)") }
        return try await store.lastSequence()
    }
    func pruneEvents(now: Date, limit: Int) async throws(StoreError) -> Int {
        try await store.pruneEvents(now: now, limit: limit)
    }
    func integrityViolations() async throws(StoreError) -> [IntegrityViolation] {
        try await store.integrityViolations()
    }
}

/// A count shared by the copies of a fake store.
final class ReadCount: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add() { value.withLock { $0 += 1 } }
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

/// The daemon's three stages, as its I/O thread and store loop drive them: the decoder
/// fills a batch, the committer commits it, the encoder writes its replies and events.
@Suite("The request stages")
struct StagesTests {
    let state: StateDirectory
    let logger = Logger(label: "test.stages")

    init() throws { state = try StateDirectory() }

    private func committer(_ store: any QuoteStore) throws -> BatchCommitter<RequestTicket> {
        try BatchCommitter(
            store: store, catalog: LiveCatalog(.standard), logger: logger, daemonTicket: RequestTicket.daemon)
    }

    /// The real store, and the three stages over it as the daemon configures them.
    private func stages() throws -> (SQLiteQuoteStore, BatchCommitter<RequestTicket>, RequestDecoder, ReplyEncoder) {
        let store = try SQLiteQuoteStore(path: state.configuration.databasePath, catalog: .standard, logger: logger)
        return (
            store, try committer(store), RequestDecoder(maxMessageBytes: state.configuration.maxMessageBytes),
            ReplyEncoder(maxReplyBytes: state.configuration.maxReplyBytes)
        )
    }

    private static func frames(_ identity: String, _ body: String) -> [[UInt8]] {
        [Array(identity.utf8), [], Array(body.utf8)]
    }

    private static let submit =
        #"{"v":1,"op":"submit","id":"w1","customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#

    @Test(
        "when the store cannot commit, every write in the batch gets storage_error, reads are still answered, and nothing is published"
    )
    func storageErrors() async throws {
        let real = try SQLiteQuoteStore(path: state.configuration.databasePath, catalog: .standard, logger: logger)
        let committer = try committer(FailingCommits(store: real))
        let decoder = RequestDecoder(maxMessageBytes: state.configuration.maxMessageBytes)
        let encoder = ReplyEncoder(maxReplyBytes: state.configuration.maxReplyBytes)

        var batch = committer.newBatch()
        decoder.decode(Self.frames("client-a", Self.submit), userId: nil, into: &batch)
        decoder.decode(Self.frames("client-b", #"{"v":1,"op":"ping","id":"r1"}"#), userId: nil, into: &batch)
        decoder.decode(
            Self.frames("client-c", #"{"v":1,"op":"cancel","id":"w2","quoteId":1}"#), userId: nil, into: &batch)
        // The daemon's own work, as `enqueue` adds it: answered to no one, counted nowhere.
        batch.append(RequestTicket.daemon, write: CheckedRequest(.serveWaitList, by: .daemon))
        #expect(batch.writeRequests.count == 3 && batch.writeIndices.count == 3 && batch.reads.count == 1)
        let committed = await committer.commit(batch)
        #expect(committed.writeResults == nil, "a failed commit has no results")
        let encoded = encoder.encodeReplies(committed)

        #expect(encoder.encodeEvents(encoded).isEmpty)
        #expect(encoded.replies.count == 3)
        let codec = WireCodec()
        let replies = try encoded.replies.map { try codec.decode(WireReply.self, from: try #require($0.last)) }
        #expect(
            encoded.replies.map { $0.first.map { String(decoding: $0, as: UTF8.self) } } == [
                "client-a", "client-b", "client-c",
            ])
        #expect(replies[0].ok == false && replies[0].error?.code == .storageError)
        #expect(replies[1].ok == true && replies[1].pong == true)
        #expect(replies[2].ok == false && replies[2].error?.code == .storageError)
        #expect(replies[0].error?.message.contains("retry") == true)
        #expect(
            encoded.tickets.map(\.code) == [.storageError, nil, .storageError, .storageError],
            "the figures count each answer")
        #expect(encoded.tickets.map { $0.received == nil } == [false, false, false, true])
        #expect(try await real.counts().values.reduce(0, +) == 0, "nothing was written")
        #expect(try await real.lastSequence() == 0)
    }

    @Test(
        "once a read finds the store unreachable, the batch's other reads are answered at once, without asking it again"
    )
    func unreachableStoreFailsReadsAtOnce() async throws {
        let real = try SQLiteQuoteStore(path: state.configuration.databasePath, catalog: .standard, logger: logger)
        let failing = FailingCommits(store: real, code: .unavailable, readsFail: true)
        let committer = try committer(failing)
        let decoder = RequestDecoder(maxMessageBytes: state.configuration.maxMessageBytes)
        let encoder = ReplyEncoder(maxReplyBytes: state.configuration.maxReplyBytes)
        var batch = committer.newBatch()
        decoder.decode(Self.frames("client-a", Self.submit), userId: nil, into: &batch)
        decoder.decode(Self.frames("client-b", #"{"v":1,"op":"ping","id":"p"}"#), userId: nil, into: &batch)
        decoder.decode(Self.frames("client-c", #"{"v":1,"op":"get","id":"g","quoteId":1}"#), userId: nil, into: &batch)
        decoder.decode(Self.frames("client-d", #"{"v":1,"op":"get","id":"h","quoteId":2}"#), userId: nil, into: &batch)
        let encoded = encoder.encodeReplies(await committer.commit(batch))
        let codec = WireCodec()
        let replies = try encoded.replies.map { try codec.decode(WireReply.self, from: try #require($0.last)) }
        #expect(replies.count == 4)
        #expect(replies[0].error?.code == .storageError)
        #expect(replies[1].store == "down", "the ping says the store is down")
        #expect(replies[2].error?.code == .storageError && replies[3].error?.code == .storageError)
        #expect(failing.reads.count == 1, "after the ping found the store unreachable, no read waited on it")
    }

    @Test("a write whose commit failed with its outcome unknown is told that it may have been applied, not to retry")
    func unknownOutcome() async throws {
        let real = try SQLiteQuoteStore(path: state.configuration.databasePath, catalog: .standard, logger: logger)
        let committer = try committer(FailingCommits(store: real, outcomeUnknown: true))
        let decoder = RequestDecoder(maxMessageBytes: state.configuration.maxMessageBytes)
        let encoder = ReplyEncoder(maxReplyBytes: state.configuration.maxReplyBytes)
        var batch = committer.newBatch()
        decoder.decode(Self.frames("client-a", Self.submit), userId: nil, into: &batch)
        let committed = await committer.commit(batch)
        #expect(committed.writeResults == nil && committed.writesMayHaveApplied)
        let encoded = encoder.encodeReplies(committed)
        #expect(encoder.encodeEvents(encoded).isEmpty)
        let reply = try WireCodec().decode(WireReply.self, from: try #require(encoded.replies.first?.last))
        #expect(reply.ok == false && reply.error?.code == .storageError)
        let message = reply.error?.message ?? ""
        #expect(message.contains("outcome is unknown") && message.contains("may have been applied"), "\(message)")
        #expect(!message.contains("nothing was applied"), "\(message)")
    }

    @Test(
        "a batch of only invalid submissions is answered without opening a write transaction, while another process holds the write lock"
    )
    func invalidSubmissionsNeverWait() async throws {
        let configuration = state.configuration
        var storeConfiguration = SQLiteQuoteStore.Configuration()
        storeConfiguration.busyTimeout = .milliseconds(300)
        let store = try SQLiteQuoteStore(
            path: configuration.databasePath, catalog: .standard, configuration: storeConfiguration, logger: logger)
        let committer = try committer(store)
        let decoder = RequestDecoder(maxMessageBytes: configuration.maxMessageBytes)
        let encoder = ReplyEncoder(maxReplyBytes: configuration.maxReplyBytes)

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
        // The holder's transaction may fail to begin: then it never signals, and the test stops.
        try #require(locked.wait(timeout: .now() + 60) == .success, "the other connection took the write lock")
        defer {
            release.signal()
            finished.wait()
        }

        let invalid = [
            #"{"v":1,"op":"submit","id":"a","customer":{"name":"Ann","email":"bad"},"services":["Oil Change"]}"#,
            #"{"v":1,"op":"submit","id":"b","idempotencyKey":"k-b","car":{"make":"Honda"},"services":[]}"#,
            #"{"v":1,"op":"book","id":"c","quoteId":1,"mechanic":"Nobody At All"}"#,
        ]
        var batch = committer.newBatch()
        for (index, body) in invalid.enumerated() {
            decoder.decode(Self.frames("client-\(index)", body), userId: nil, into: &batch)
        }
        #expect(batch.writeRequests.isEmpty, "nothing for the transaction")
        let encoded = encoder.encodeReplies(await committer.commit(batch))
        let codec = WireCodec()
        let codes = try encoded.replies.map {
            try codec.decode(WireReply.self, from: try #require($0.last)).error?.code
        }
        #expect(codes.map { $0?.rawValue } == ["invalid_submission", "invalid_submission", "unknown_mechanic"])
        #expect(encoder.encodeEvents(encoded).isEmpty)

        // The control: a valid submission does need the lock, and cannot have it.
        var valid = committer.newBatch()
        decoder.decode(Self.frames("client-d", Self.submit), userId: nil, into: &valid)
        let blocked = encoder.encodeReplies(await committer.commit(valid))
        let reply = try codec.decode(WireReply.self, from: try #require(blocked.replies.first?.last))
        #expect(reply.error?.code == .storageError)
    }

    @Test("a committed submission is answered once and announced by its two events, in seq order")
    func committedSubmission() async throws {
        let (store, committer, decoder, encoder) = try stages()
        var batch = committer.newBatch()
        decoder.decode(Self.frames("client-a", Self.submit), userId: nil, into: &batch)
        let encoded = encoder.encodeReplies(await committer.commit(batch))
        let events = encoder.encodeEvents(encoded)
        let codec = WireCodec()
        let reply = try codec.decode(WireReply.self, from: try #require(encoded.replies.first?.last))
        #expect(reply.ok == true && reply.quote?.state == "ready")
        #expect(events.map(\.seq) == [1, 2])
        #expect(events.map { String(decoding: $0.topic, as: UTF8.self) } == ["quote.submitted", "quote.ready"])
        #expect(try await store.lastSequence() == 2)
    }

    @Test(
        "each reply is its request's envelope then one body, for every envelope form, handed over or still held by the sender"
    )
    func repliesKeepTheirEnvelopes() async throws {
        let (_, committer, decoder, encoder) = try stages()
        let body = Array(Self.submit.utf8)
        let messages: [[[UInt8]]] = [
            [Array("peer".utf8), [], body], [Array("proxy".utf8), Array("peer".utf8), [], body],
            [Array("dealer".utf8), body], [Array("refused".utf8), [], Array("{".utf8)],
        ]
        var batch = committer.newBatch()
        // The first two handed over (the array becomes the reply), the others still held here.
        var handedOver = Array(messages[..<2])
        for index in handedOver.indices {
            var frames: [[UInt8]] = []
            swap(&frames, &handedOver[index])
            decoder.decode(frames, userId: nil, into: &batch)
        }
        for frames in messages[2...] { decoder.decode(frames, userId: nil, into: &batch) }
        let encoded = encoder.encodeReplies(await committer.commit(batch))
        #expect(encoded.replies.map { Array($0.dropLast()) } == messages.map { Array($0.dropLast()) })
        let codec = WireCodec()
        let replies = try encoded.replies.map { try codec.decode(WireReply.self, from: try #require($0.last)) }
        #expect(replies.map(\.ok) == [true, true, true, false])
        #expect(messages[3][2] == Array("{".utf8), "what the sender held is as it was")
        #expect(encoded.tickets.allSatisfy { $0.envelope.isEmpty }, "the envelopes went into the replies")
    }
}

extension StagesTests {
    @Test("a batch begins against the catalog in force when its first request comes, however long it waited empty")
    func batchBeginsWithItsFirstRequest() async throws {
        let store = try SQLiteQuoteStore(
            path: state.configuration.databasePath, catalog: .standard, logger: logger)
        let catalog = LiveCatalog(.standard)
        let committer = try BatchCommitter(
            store: store, catalog: catalog, logger: logger, daemonTicket: RequestTicket.daemon)
        // A newer catalog (another daemon's change) while the committer waits with an empty batch.
        var smaller = try Catalog(
            services: Catalog.standard.services, mechanics: Array(Catalog.standard.mechanics.prefix(1)))
        smaller.version = 2
        catalog.advance(to: smaller)
        var seen: Catalog?
        _ = committer.receive { batch in
            seen = batch.catalog
            batch.append(RequestTicket.daemon)
        }
        #expect(seen?.mechanics.count == 1)
    }
}

/// The decoder on its own: envelopes, sizes and callers, before anything reaches the store.
@Suite("The request decoder")
struct RequestDecoderTests {
    /// A fixed list of callers: a unit-test fake of the allow-list, whose own tests are in
    /// the security suite.
    struct Callers: CallerDirectory {
        var callers: [String: Caller]
        func caller(userId: String?) -> Caller? { userId.flatMap { callers[$0] } }
    }

    private static func decode(
        _ frames: [[UInt8]], userId: String? = nil, callers: (any CallerDirectory)? = nil, maxMessageBytes: Int = 1_024
    ) -> RequestBatch<RequestTicket> {
        var batch = RequestBatch<RequestTicket>(catalog: .standard)
        RequestDecoder(maxMessageBytes: maxMessageBytes, callers: callers).decode(
            frames, userId: userId, into: &batch)
        return batch
    }

    private static let ping = Array(#"{"v":1,"op":"ping","id":7}"#.utf8)

    @Test(
        "every envelope form a ZeroMQ peer sends is answered on the envelope it came with",
        arguments: [
            [[UInt8]](arrayLiteral: Array("peer".utf8), [], ping),
            [[UInt8]](arrayLiteral: Array("proxy".utf8), Array("peer".utf8), [], ping),
            [[UInt8]](arrayLiteral: Array("peer".utf8), ping),
        ])
    func envelopes(frames: [[UInt8]]) throws {
        let batch = Self.decode(frames)
        #expect(batch.reads.count == 1)
        let ticket = try #require(batch.tickets.first)
        #expect(ticket.envelope == Array(frames.dropLast()))
        #expect(ticket.id == .number(7) && ticket.op == .ping && ticket.refusal == nil)
    }

    @Test("an envelope too deep to answer is counted and dropped without a reply")
    func tooDeep() throws {
        let frames =
            Array(repeating: Array("hop".utf8), count: RequestDecoder.maximumEnvelopeDepth + 1) + [[], Self.ping]
        let ticket = try #require(Self.decode(frames).tickets.first)
        #expect(ticket.envelope.isEmpty && ticket.refusal == nil && ticket.code == .malformedEnvelope)
    }

    @Test("a body over the limit is refused with message_too_large before it is parsed")
    func tooLarge() throws {
        let body = Array(#"{"v":1,"op":"ping","id":"#.utf8) + Array(repeating: UInt8(ascii: "1"), count: 2_000) + [125]
        let batch = Self.decode([Array("peer".utf8), [], body])
        let ticket = try #require(batch.tickets.first)
        #expect(ticket.code == .messageTooLarge && ticket.id == nil)
        let reply = try WireCodec().decode(WireReply.self, from: try #require(ticket.refusal))
        #expect(reply.error?.message.contains("limit is 1024") == true)
    }

    @Test(
        "with an allow-list, a key no longer listed and a role without the operation are forbidden; a client reaches its own quotes only"
    )
    func authorization() throws {
        let callers = Callers(callers: [
            "K1": Caller(name: "shop", role: .client), "K2": Caller(name: "watcher", role: .observer),
        ])
        let get = Array(#"{"v":1,"op":"get","id":1,"quoteId":3}"#.utf8)
        let cancel = Array(#"{"v":1,"op":"cancel","id":2,"quoteId":3}"#.utf8)
        let gone = Self.decode([Array("p".utf8), [], get], userId: "K9", callers: callers)
        #expect(gone.tickets.first?.code == .forbidden)
        let observer = Self.decode([Array("p".utf8), [], cancel], userId: "K2", callers: callers)
        #expect(observer.tickets.first?.code == .forbidden && observer.writeRequests.isEmpty)
        let client = Self.decode([Array("p".utf8), [], get], userId: "K1", callers: callers)
        let read = try #require(client.reads.first)
        #expect(read.request.actor == Actor(name: "shop", ownQuotesOnly: true))
    }
}

extension StagesTests {
    /// The kind of answer, for comparing.
    private static func kind(_ answer: Reply?) -> String {
        switch answer {
        case .change(let change): "change \(change.quote.state)\(change.replayed ? " again" : "")"
        case .quote(let quote, let history): "quote \(quote.state), \(history.count) steps"
        case .quotes(let quotes, _, _): "quotes \(quotes.count)"
        case .mechanics(let mechanics, _): "mechanics \(mechanics.count)"
        case .services(let services, _): "services \(services.count)"
        case .roster(let mechanic, let onDuty, _):
            "roster \(mechanic.name) \(mechanic.skill) \(onDuty.map(String.init) ?? "-")"
        case .catalog(_, let version, _): "catalog \(version)"
        case .catalogApplied(let version, _): "catalog applied \(version)"
        case .events(let events, _, _): "events \(events.count)"
        case .stats(let stats): "stats \(stats.counts.values.reduce(0, +))"
        case .pong(.success): "pong"
        case .pong(.failure): "store down"
        case nil: "unreadable"
        }
    }

    @Test("every operation's reply, as the stages write it, reads as that operation's answer")
    func everyReplyReadsAsItsAnswer() async throws {
        let (_, committer, decoder, encoder) = try stages()
        let codec = WireCodec()
        let car = Submission.CarInput(make: "Honda", model: "Civic", year: 2015, trim: "EX")
        let customer = Submission.CustomerInput(name: "Reza", email: "reza@example.com", address: "1 Main St")
        let oilChange = Submission(customer: customer, car: car, services: ["Oil Change"])
        var noTrim = oilChange
        noTrim.car?.trim = nil
        let requests: [(Request, String)] = [
            (.submit(oilChange, book: true), "change booked"),
            (.get(quoteId: 1), "quote booked, 3 steps"),
            (.submit(oilChange), "change ready"),
            (.book(quoteId: 2, mechanic: "Mike Fulton"), "change booked"),
            (.reassign(quoteId: 2), "change booked"),
            (.complete(quoteId: 2), "change completed"),
            (.submit(noTrim), "change pending"),
            (.resolve(quoteId: 3, Resolution(car: .init(trim: "EX"))), "change ready"),
            (.cancel(quoteId: 3, reason: "changed their mind"), "change cancelled"),
            (.submit(oilChange, idempotencyKey: "once"), "change ready"),
            (.submit(oilChange, idempotencyKey: "once"), "change ready again"),
            (.list(limit: 10), "quotes 4"),
            (.waiting(), "quotes 0"),
            (.mechanics(), "mechanics 10"),
            (.services, "services 11"),
            (.setDuty(mechanic: "Joe Murphy", onDuty: false), "roster Joe Murphy master false"),
            (.addMechanic(name: "Nia", skill: "junior"), "roster Nia junior -"),
            (.updateMechanic(mechanic: "Nia", skill: "master"), "roster Nia master -"),
            (.retireMechanic(mechanic: "Nia"), "roster Nia master -"),
            (.catalog, "catalog 4"),
            (.applyCatalog(CatalogDocument(.standard)), "catalog applied 4"),
            (.events(since: 0, limit: 2), "events 2"),
            (.stats, "stats 4"),
            (.ping, "pong"),
        ]
        #expect(Set(requests.map(\.0.operation)) == Set(Operation.allCases), "every operation is tried")
        var answers: [String] = []
        for (index, (request, _)) in requests.enumerated() {
            var batch = committer.newBatch()
            let body = try JSONEncoder().encode(request.frame(id: .number(Int64(index))))
            decoder.decode(Self.frames("client", String(decoding: body, as: UTF8.self)), userId: nil, into: &batch)
            let encoded = encoder.encodeReplies(await committer.commit(batch))
            let reply = try codec.decode(WireReply.self, from: try #require(encoded.replies.first?.last))
            #expect(reply.ok, "\(request.operation): \(reply.error?.message ?? "")")
            answers.append(Self.kind(Reply(reply, answering: request.operation)))
        }
        #expect(answers == requests.map(\.1))
    }

    @Test("a get whose history is longer than a reply holds gives its first step and its latest, and says truncated")
    func longHistoryIsCut() async throws {
        let (store, committer, decoder, _) = try stages()
        // Room for three steps (128 bytes each, as the encoder counts them).
        let encoder = ReplyEncoder(maxReplyBytes: 3 * 128)
        func answer(_ body: String) async throws -> WireReply {
            var batch = committer.newBatch()
            decoder.decode(Self.frames("client-a", body), userId: nil, into: &batch)
            let encoded = encoder.encodeReplies(await committer.commit(batch))
            return try WireCodec().decode(WireReply.self, from: try #require(encoded.replies.first?.last))
        }
        let booked = try await answer(
            Self.submit.replacingOccurrences(of: #""services""#, with: #""book":true,"services""#))
        let id = try #require(booked.quote?.id)
        #expect(booked.quote?.state == "booked")
        let whole = try await answer(#"{"v":1,"op":"get","id":"g1","quoteId":\#(id)}"#)
        #expect(whole.history?.map(\.seq) == [1, 2, 3])
        #expect(whole.truncated == nil)

        #expect(try await answer(#"{"v":1,"op":"complete","id":"w2","quoteId":\#(id)}"#).ok)
        let stored = try #require(try await store.quote(QuoteID(id))).history.map(\.seq)
        #expect(stored.count == 4)
        let cut = try await answer(#"{"v":1,"op":"get","id":"g2","quoteId":\#(id)}"#)
        #expect(cut.history?.map(\.seq) == [stored[0], stored[2], stored[3]])
        #expect(cut.history?.last?.to == "completed")
        #expect(cut.truncated == true)
    }

    @Test("a list by customer that stops at the search's bound says truncated, and its next goes on past it")
    func boundedCustomerSearch() async throws {
        let (_, committer, decoder, encoder) = try stages()
        func answer(_ bodies: [String]) async throws -> [WireReply] {
            var batch = committer.newBatch()
            for body in bodies { decoder.decode(Self.frames("client-a", body), userId: nil, into: &batch) }
            let encoded = encoder.encodeReplies(await committer.commit(batch))
            return try encoded.replies.map { try WireCodec().decode(WireReply.self, from: try #require($0.last)) }
        }
        // More quotes of one address than a search examines, none of them booked.
        let count = QuotePage.defaultExamined + 100
        for start in stride(from: 0, to: count, by: 500) {
            let bodies = (start..<min(count, start + 500)).map {
                Self.submit.replacingOccurrences(of: #""id":"w1""#, with: #""id":"w\#($0)""#)
            }
            #expect(try await answer(bodies).allSatisfy(\.ok))
        }
        let list = #"{"v":1,"op":"list","id":"l","customer":"reza@example.com","state":"booked","limit":10"#
        let first = try #require(try await answer([list + "}"]).first)
        #expect(first.ok)
        #expect(first.quotes?.isEmpty == true)
        #expect(first.truncated == true)
        #expect(first.next == Int64(QuotePage.defaultExamined))
        let last = try #require(try await answer([list + #","after":\#(first.next ?? 0)}"#]).first)
        #expect(last.quotes?.isEmpty == true)
        #expect(last.next == nil)
        #expect(last.truncated == nil)
    }
}
