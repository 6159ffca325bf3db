import ArgumentParser
import Configuration
import Foundation
import Logging
import QuoteCore
import QuoteDaemon
import QuoteRules
import QuoteStoreSQLite
import QuoteWire
import ZeroMQ

/// What the daemon spends on a request between its sockets: its three stages (the
/// ``RequestDecoder``, the ``BatchCommitter``'s transaction, the ``ReplyEncoder``), on one
/// thread, for the same submit frames `quoted-bench load` sends. Under
/// `valgrind --tool=callgrind` it counts the daemon's instructions a request, which the
/// end-to-end figures cannot separate from the machine's noise. It runs on the daemon's
/// allocator (``Allocator``), whose cost it counts too.
struct StagesBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "The daemon's work per submission without sockets: decode, commit, encode.")

    @Option(help: "Submissions in all.") var submissions = 20_000
    @Option(
        help: "Instead of submissions: this many book + complete cycles, a batch of books then a batch of completes.")
    var cycles: Int?
    @Option(help: "Submissions per batch (the daemon's group commit).") var batch = 256
    @Option(help: "Quotes stored first, through the same path, not measured.") var preload = 0
    @Flag(help: "Submit without idempotency keys (none to index).") var noKeys = false
    @Option(help: "The idempotency keys: by request number, version 7 UUIDs or version 4.") var keys: KeyOrder =
        .ordered
    @Flag(help: "Each submission a new customer's, rather than all one customer's.") var distinctCustomers = false
    @Option(help: "Where to put the scratch database.") var directory = NSTemporaryDirectory()

    func run() throws {
        try runBlocking { [self] in try await measure() }
    }

    private func measure() async throws {
        let state = (directory as NSString).appendingPathComponent("quoted-bench-engine-\(getpid())")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let configuration = try DaemonConfiguration(
            reader: ConfigReader(
                provider: InMemoryProvider(values: ["stateDirectory": .init(.string(state), isSecret: false)])))
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        // With cycles, a mechanic for every quote of a batch, so that every booking succeeds.
        let catalog =
            try cycles.map { _ in
                try JSONDecoder().decode(
                    CatalogDocument.self, from: Data(BenchDaemon.catalogText(mechanics: max(1, batch)).utf8)
                ).catalog()
            } ?? .standard
        SQLiteQuoteStore.configureProcess()
        let store = try SQLiteQuoteStore(path: configuration.databasePath, catalog: catalog, logger: logger)
        let engine = try Stages(
            decoder: RequestDecoder(maxMessageBytes: configuration.maxMessageBytes),
            committer: BatchCommitter(
                store: store, catalog: LiveCatalog(catalog), logger: logger, daemonTicket: RequestTicket.daemon),
            encoder: ReplyEncoder(maxReplyBytes: configuration.maxReplyBytes))
        var factory = RequestFactory(runTag: "engine")
        factory.idempotencyKeys = !noKeys
        factory.keyOrder = keys
        factory.distinctCustomers = distinctCustomers
        let envelope: [[UInt8]] = [Array("client-0001".utf8), []]
        let size = max(1, batch)
        let rounds = max(1, submissions / size)
        // Submit frames for request ids `ids`, as a ROUTER hands them over.
        func submitFrames(_ ids: Range<Int64>) -> [[[UInt8]]] {
            ids.map { id in
                var frames: [[UInt8]] = []
                frames.reserveCapacity(envelope.count + 1)
                frames.append(contentsOf: envelope)
                frames.append(factory.body(.submit, id: id))
                return frames
            }
        }
        var nextID: Int64 = 1
        while nextID <= preload {
            let messages = submitFrames(nextID..<min(nextID + 1_000, Int64(preload) + 1))
            nextID += Int64(messages.count)
            _ = await engine.handle(messages)
        }
        if let cycles {
            return try await runCycles(
                cycles, batch: size, engine: engine, factory: factory, envelope: envelope, from: nextID)
        }
        var replyBytes = 0
        var eventBytes = 0
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        for _ in 0..<rounds {
            let messages = submitFrames(nextID..<nextID + Int64(size))
            nextID += Int64(size)
            let start = clock.now
            let output = await engine.handle(messages)
            elapsed += clock.now - start
            guard output.replies.count == size, output.events.count == 2 * size else {
                throw ValidationError(
                    "expected \(size) replies and \(2 * size) events, got \(output.replies.count) and \(output.events.count)"
                )
            }
            replyBytes += output.replies.reduce(0) { $0 + ($1.last?.count ?? 0) }
            eventBytes += output.events.reduce(0) { $0 + $1.body.count }
        }
        let count = rounds * size
        print(
            String(
                format:
                    "engine: %d submissions in batches of %d: %.0f/s, %.1f µs each; %d reply and %d event bytes each",
                count, size, Double(count) / elapsed.seconds, elapsed.seconds * 1e6 / Double(count),
                replyBytes / count, eventBytes / count) + "; allocator: \(Allocator.name)")
    }

    /// Book + complete cycles: per round, `batch` quotes are submitted (not measured), then
    /// booked in one batch and completed in the next (measured), as the contention workload's
    /// requests reach the store.
    private func runCycles(
        _ cycles: Int, batch size: Int, engine: Stages, factory: RequestFactory, envelope: [[UInt8]],
        from firstID: Int64
    ) async throws {
        var nextID = firstID
        func frames(_ kind: RequestKind, _ quotes: [Int64]) -> [[[UInt8]]] {
            defer { nextID += Int64(quotes.count) }
            return quotes.indices.map { envelope + [factory.body(kind, id: nextID + Int64($0), quote: quotes[$0])] }
        }
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        var done = 0
        while done < cycles {
            let submitted = await engine.handle(frames(.submit, Array(repeating: 0, count: size)))
            let quotes = submitted.replies.compactMap { ReplyScanner(bytes: $0.last ?? []).quoteID }
            for kind in [RequestKind.book, .complete] {
                let start = clock.now
                let output = await engine.handle(frames(kind, quotes))
                elapsed += clock.now - start
                let refused = output.replies.filter { !ReplyScanner(bytes: $0.last ?? []).isOK }.count
                guard refused == 0 else {
                    throw ValidationError("\(refused) of \(quotes.count) \(kind) requests refused")
                }
            }
            done += quotes.count
        }
        print(
            String(
                format: "engine: %d book + complete cycles in batches of %d: %.0f/s, %.1f µs each", done, size,
                Double(done) / elapsed.seconds, elapsed.seconds * 1e6 / Double(done)))
    }
}

/// The daemon's three stages run in turn on one batch, as its I/O thread and store loop run
/// them, without threads or sockets.
struct Stages {
    let decoder: RequestDecoder
    let committer: BatchCommitter<RequestTicket>
    let encoder: ReplyEncoder

    /// The replies and events (each its topic and body, by its `seq`) of the messages `batch`,
    /// each its frames, as the daemon sends them.
    func handle(
        _ batch: consuming [[[UInt8]]]
    ) async -> (replies: [[[UInt8]]], events: [PublishedEvent]) {
        var received = committer.newBatch()
        // Each message handed over, as the I/O thread hands over what it received.
        for index in batch.indices {
            var frames: [[UInt8]] = []
            swap(&frames, &batch[index])
            decoder.decode(frames, userId: nil, into: &received)
        }
        let encoded = encoder.encodeReplies(await committer.commit(consume received))
        return (encoded.replies, encoder.encodeEvents(encoded))
    }
}
