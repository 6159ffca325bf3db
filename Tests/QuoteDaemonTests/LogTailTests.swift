import Foundation
import GRDB
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite
import QuoteWire
import Testing

@testable import QuoteDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The tail of the event log, over the real SQLite store: what a daemon on a shared store
/// publishes of the others' work.
// A generous limit: the end-to-end tests that run beside these block the cooperative pool's
// threads while they wait on their sockets, and these wait for the pool.
@Suite("The log tail", .serialized, .timeLimit(.minutes(5)))
struct LogTailTests {
    let state: StateDirectory
    let store: SQLiteQuoteStore

    init() throws {
        state = try StateDirectory()
        store = try SQLiteQuoteStore(
            path: state.configuration.databasePath, catalog: .standard, logger: Logger(label: "test.tail"))
    }

    /// Submits `count` quotes, two events each.
    private func submit(_ count: Int) async throws {
        let submission = Submission(
            customer: .init(name: "Reza", email: "reza@example.com", address: "1 Main St"),
            car: .init(make: "Honda", model: "Civic", year: 2015, trim: "EX"), services: ["Oil Change"])
        let results = try await Rulebook().apply(
            Array(repeating: .submit(submission, idempotencyKey: nil, book: false), count: count), catalog: .standard,
            to: store)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
    }

    /// Waits until the tail says something is ready to take (or 10 s, for the caller's loop to
    /// see a time limit's cancellation): on a thread of its own, so that the cooperative pool,
    /// where the tail reads, is never blocked by the wait.
    private static func waitUntilReady(_ tail: LogTail) async {
        let descriptor = tail.readyDescriptor
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(&ready, 1, 10_000) == -1 && errno == EINTR {}
                continuation.resume()
            }.start()
        }
    }

    /// A tail of the store after `lastSeq`, woken once, that encodes each event as its type;
    /// its task is cancelled by the caller.
    private func runningTail(after lastSeq: Int64) throws -> (tail: LogTail, running: Task<Void, Never>) {
        let tail = try LogTail(
            store: store, after: lastSeq, pollInterval: .seconds(3_600), logger: Logger(label: "test")
        ) { events in events.map { PublishedEvent(seq: $0.seq, topic: Array($0.type.utf8), body: []) } }
        let running = Task { await tail.run() }
        tail.wake()
        return (tail, running)
    }

    /// What `tail` hands over, until a delivery ends with event `last` (or, failing the
    /// test, 30 s have passed).
    private static func deliveries(of tail: LogTail, through last: Int64) async throws -> [LogTail.Delivery] {
        var deliveries: [LogTail.Delivery] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while deliveries.last?.events.last?.seq != last {
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else {
                Issue.record(
                    "nothing through \(last) within 30 s; delivered through \(deliveries.last?.events.last?.seq ?? 0)")
                break
            }
            await waitUntilReady(tail)
            deliveries += tail.take()
        }
        return deliveries
    }

    @Test("woken, it hands over every event after its start, in order, each delivery after the one before")
    func deliversInOrder() async throws {
        try await submit(3)
        let (tail, running) = try runningTail(after: 2)
        defer { running.cancel() }
        var seqs: [Int64] = []
        for delivery in try await Self.deliveries(of: tail, through: 6) {
            #expect(delivery.after == (seqs.last ?? 2), "each delivery follows the one before")
            seqs += delivery.events.map(\.seq)
        }
        #expect(seqs == [3, 4, 5, 6])
    }

    @Test(
        "while no one listens it reads nothing, only asks about the catalog and how far the log goes; listened to, it reads on from what was published"
    )
    func readsNothingUnheard() async throws {
        try await submit(3)
        let checks = ReadCount()
        let tail = try LogTail(
            store: store, after: 0, pollInterval: .seconds(3_600), logger: Logger(label: "test"), listening: false,
            checkCatalog: { checks.add() },
            encode: { events in events.map { PublishedEvent(seq: $0.seq, topic: [], body: []) } })
        let running = Task { await tail.run() }
        defer { running.cancel() }
        tail.wake()
        await Self.waitUntilReady(tail)
        #expect(tail.take().isEmpty, "nothing read")
        #expect(tail.takeIdleThrough() == 6)
        #expect(checks.count == 1)

        // 4 passed unseen meanwhile; someone connects.
        tail.published(through: 4)
        tail.listen(true)
        let read = try await Self.deliveries(of: tail, through: 6)
        #expect(read.first?.after == 4 && read.flatMap(\.events).map(\.seq) == [5, 6])
        #expect(checks.count == 2, "asked again: what passed unseen may have changed the catalog")
    }

    @Test("an event it cannot read is skipped, logged, and those after it are delivered")
    func unreadableEventIsSkipped() async throws {
        try await submit(3)
        // An event kind this version does not know, as a newer daemon sharing the store might write.
        try await DatabaseQueue(path: state.configuration.databasePath).write { db in
            // Quote 2's row: its priced event, seq 4, which also stands for its submission, seq 3.
            try db.execute(sql: "UPDATE events SET type = 'quote.teleported', data = x'00' WHERE seq = 4")
        }
        // In order, seqs 3 and 4 skipped, nothing held for them.
        let (published, skipped, waiting) = try await publishedThrough(6)
        #expect(published == [1, 2, 5, 6])
        #expect(skipped == 2)
        #expect(!waiting)
    }

    @Test("an event of a row of its own that it cannot read is skipped alone")
    func unreadableSingleEventIsSkipped() async throws {
        try await submit(2)
        // Quote 1 booked: seq 5 and 6, a row each (the quote's state, then the mechanic's).
        let booked = try await Rulebook().apply([.book(QuoteID(1), mechanic: nil)], catalog: .standard, to: store)
        #expect(booked.allSatisfy { (try? $0.get()) != nil })
        try await DatabaseQueue(path: state.configuration.databasePath).write { db in
            try db.execute(sql: "UPDATE events SET type = 'quote.teleported', data = x'00' WHERE seq = 5")
        }
        let (published, skipped, waiting) = try await publishedThrough(6)
        #expect(published == [1, 2, 3, 4, 6])
        #expect(skipped == 1)
        #expect(!waiting)
    }

    /// What a tail of the whole log delivers through `last`, published as the I/O thread does
    /// (``PublishOrder``): the seqs published in order, how many were skipped, and whether the
    /// order still waits for any.
    private func publishedThrough(_ last: Int64) async throws -> (published: [Int64], skipped: Int64, waiting: Bool) {
        let (tail, running) = try runningTail(after: 0)
        defer { running.cancel() }
        var order = PublishOrder(after: 0, isOrdered: true)
        var published: [Int64] = []
        var skipped: Int64 = 0
        for delivery in try await Self.deliveries(of: tail, through: last) {
            let read = order.addRead(
                after: delivery.after,
                delivery.events.map { PublishedEvent(seq: $0.seq, topic: Array(String($0.seq).utf8), body: []) })
            published += read.ready.map { Int64(String(decoding: $0.topic, as: UTF8.self)) ?? -1 }
            skipped += read.skipped
        }
        return (published, skipped, order.isWaiting)
    }

    @Test("it reads no further ahead of what was published than its read-ahead")
    func boundedReadAhead() async throws {
        let pages = Int(LogTail.readAhead) / LogTail.pageSize
        try await submit(Int(LogTail.readAhead))  // twice the read-ahead in events
        let tail = try LogTail(store: store, after: 0, pollInterval: .seconds(3_600), logger: Logger(label: "test")) {
            events in events.map { PublishedEvent(seq: $0.seq, topic: [], body: []) }
        }
        let running = Task { await tail.run() }
        defer { running.cancel() }
        tail.wake()
        var last: Int64 = 0
        while last < LogTail.readAhead {
            try Task.checkCancellation()
            await Self.waitUntilReady(tail)
            last = tail.take().last?.events.last?.seq ?? last
        }
        #expect(last == LogTail.readAhead, "\(pages) pages, and no more until published")
        // Published up to there: the next wake reads on.
        tail.published(through: last)
        tail.wake()
        while last < 2 * LogTail.readAhead {
            try Task.checkCancellation()
            await Self.waitUntilReady(tail)
            last = tail.take().last?.events.last?.seq ?? last
        }
        #expect(last == 2 * LogTail.readAhead)
    }

    @Test("it reads no further ahead of what was published than its read-ahead in bytes, however few the events")
    func readAheadBoundedInBytes() async throws {
        let pageSize = Int64(LogTail.pageSize)
        try await submit(LogTail.pageSize)  // two pages of events
        // Each event encoded larger than the byte read-ahead allows a page's worth of.
        let eventBytes = LogTail.readAheadBytes / LogTail.pageSize + 1
        let tail = try LogTail(store: store, after: 0, pollInterval: .seconds(3_600), logger: Logger(label: "test")) {
            events in
            events.map { PublishedEvent(seq: $0.seq, topic: [], body: [UInt8](repeating: 0, count: eventBytes)) }
        }
        let running = Task { await tail.run() }
        defer { running.cancel() }
        tail.wake()
        var last: Int64 = 0
        while last < pageSize {
            try Task.checkCancellation()
            await Self.waitUntilReady(tail)
            last = tail.take().last?.events.last?.seq ?? last
        }
        #expect(last == pageSize, "one page")
        // A tail without the bound reads the next page within milliseconds: none comes in half
        // a second (a fixed observation, on purpose: nothing announces that reading stopped).
        var ready = pollfd(fd: tail.readyDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 500) == 0, "no more until published")
        tail.published(through: last)
        tail.wake()
        while last < 2 * pageSize {
            try Task.checkCancellation()
            await Self.waitUntilReady(tail)
            last = tail.take().last?.events.last?.seq ?? last
        }
        #expect(last == 2 * pageSize)
    }
}
