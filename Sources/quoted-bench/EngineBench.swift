import ArgumentParser
import Configuration
import Foundation
import Logging
import QuoteCore
import QuoteDaemon
import QuoteStoreSQLite
import ZeroMQ

/// What the daemon spends on a request between its sockets: decode, the store's
/// transaction, encode, on one thread, for the same submit frames `quoted-bench load` sends.
/// Under `valgrind --tool=callgrind` it counts the daemon's instructions a request, which the
/// end-to-end figures cannot separate from the machine's noise.
struct EngineBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "The daemon's work per submission without sockets: decode, commit, encode.")

    @Option(help: "Submissions in all.") var submissions = 20_000
    @Option(help: "Submissions per batch (the daemon's group commit).") var batch = 256
    @Option(help: "Quotes stored first, through the same path, not measured.") var preload = 0
    @Flag(help: "Submit without idempotency keys (none to index).") var noKeys = false
    @Option(help: "Where to put the scratch database.") var directory = NSTemporaryDirectory()

    func run() throws {
        let state = (directory as NSString).appendingPathComponent("quoted-bench-engine-\(getpid())")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let configuration = try DaemonConfiguration(
            reader: ConfigReader(
                provider: InMemoryProvider(values: ["stateDirectory": .init(.string(state), isSecret: false)])))
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let store = try SQLiteQuoteStore(path: configuration.databasePath, catalog: .standard, logger: logger)
        let engine = Engine(store: store, configuration: configuration, logger: logger)
        var factory = RequestFactory(runTag: "engine")
        factory.idempotencyKeys = !noKeys
        let envelope: [[UInt8]] = [Array("client-0001".utf8), []]
        let size = max(1, batch)
        let rounds = max(1, submissions / size)
        // Submit frames for request ids `ids`, as a ROUTER hands them over.
        func submitFrames(_ ids: Range<Int64>) -> [Multipart] {
            ids.map { Multipart(frames: envelope + [factory.body(.submit, id: $0)]) }
        }
        var nextID: Int64 = 1
        while nextID <= preload {
            let messages = submitFrames(nextID..<min(nextID + 1_000, Int64(preload) + 1))
            nextID += Int64(messages.count)
            _ = engine.handle(messages)
        }
        var replyBytes = 0
        var eventBytes = 0
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        for _ in 0..<rounds {
            let messages = submitFrames(nextID..<nextID + Int64(size))
            nextID += Int64(size)
            let start = clock.now
            let output = engine.handle(messages)
            elapsed += clock.now - start
            guard output.replies.count == size, output.events.count == 2 * size else {
                throw ValidationError(
                    "expected \(size) replies and \(2 * size) events, got \(output.replies.count) and \(output.events.count)"
                )
            }
            replyBytes += output.replies.reduce(0) { $0 + ($1.last?.count ?? 0) }
            eventBytes += output.events.reduce(0) { $0 + ($1.last?.count ?? 0) }
        }
        let count = rounds * size
        print(
            String(
                format:
                    "engine: %d submissions in batches of %d: %.0f/s, %.1f µs each; %d reply and %d event bytes each",
                count, size, Double(count) / elapsed.seconds, elapsed.seconds * 1e6 / Double(count),
                replyBytes / count, eventBytes / count))
    }
}
