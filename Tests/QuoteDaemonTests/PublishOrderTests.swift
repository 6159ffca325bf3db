import QuoteWire
import Testing

@testable import QuoteDaemon

@Suite("The publishing order of a daemon's events")
struct PublishOrderTests {
    private static func events(_ seqs: ClosedRange<Int64>) -> [PublishedEvent] {
        seqs.map { PublishedEvent(seq: $0, topic: Array("e\($0)".utf8), body: []) }
    }

    private static func seqs(_ events: [PublishedEvent]) -> [String] {
        events.map { String(decoding: $0.topic, as: UTF8.self) }
    }

    @Test("a daemon alone on its store publishes its commits as they come")
    func alonePassesThrough() {
        var order = PublishOrder(after: 10, isOrdered: false)
        #expect(Self.seqs(order.add(Self.events(11...12))) == ["e11", "e12"])
        #expect(order.lastPublished == 12)
        #expect(!order.isWaiting)
    }

    @Test("on a shared store, a commit after another daemon's waits for it, then both go out in seq order")
    func ownCommitWaitsForTheOthers() {
        var order = PublishOrder(after: 10, isOrdered: true)
        #expect(order.add(Self.events(14...15)).isEmpty, "11...13 are another daemon's, not read yet")
        #expect(order.isWaiting)
        #expect(Self.seqs(order.add(Self.events(11...13))) == ["e11", "e12", "e13", "e14", "e15"])
        #expect(!order.isWaiting)
        #expect(order.lastPublished == 15)
    }

    @Test("an event read twice, or already published, goes out once")
    func duplicatesAreDropped() {
        var order = PublishOrder(after: 0, isOrdered: true)
        #expect(Self.seqs(order.add(Self.events(1...3))) == ["e1", "e2", "e3"])
        #expect(order.add(Self.events(2...3)).isEmpty)
        #expect(Self.seqs(order.add(Self.events(3...4))) == ["e4"])
    }

    @Test(
        "with no one to receive them, what is held and every number up to a commit pass at once, unread ones included")
    func passing() {
        var order = PublishOrder(after: 10, isOrdered: true)
        #expect(order.add(Self.events(14...15)).isEmpty)
        #expect(order.pass(through: 20) == 10, "11 to 20")
        #expect(order.lastPublished == 20 && !order.isWaiting)
        #expect(order.add(Self.events(12...13)).isEmpty, "read late: gone by")
        #expect(order.add(Self.events(30...31)).isEmpty)
        #expect(order.pass(through: nil) == 11, "21 to 31, up to what was held")
        #expect(order.pass(through: 25) == 0 && order.lastPublished == 31)
        var last = PublishOrder(after: .max - 1, isOrdered: true)
        #expect(last.pass(through: .max) == 1 && last.lastPublished == .max, "the last number there is, without a trap")
    }

    @Test("events pruned before they were read are skipped, and what follows goes out")
    func prunedEventsAreSkipped() {
        var order = PublishOrder(after: 10, isOrdered: true)
        #expect(order.add(Self.events(20...21)).isEmpty)
        // The log, read after 10, begins at 18: 11...17 are gone.
        let (ready, skipped) = order.logBegins(at: 18, readAfter: 10)
        #expect(skipped == 7)
        #expect(ready.isEmpty, "18 and 19 come with the read")
        #expect(Self.seqs(order.add(Self.events(18...19))) == ["e18", "e19", "e20", "e21"])
        #expect(order.logBegins(at: 30, readAfter: 25).skipped == 0, "a read from past what is published skips nothing")
    }

    @Test(
        "the last sequence number there is is published, on either kind of store, without a trap",
        arguments: [false, true])
    func lastNumber(ordered: Bool) {
        var order = PublishOrder(after: .max - 2, isOrdered: ordered)
        #expect(Self.seqs(order.add(Self.events((.max - 1)...(.max)))) == ["e\(Int64.max - 1)", "e\(Int64.max)"])
        #expect(order.add(Self.events((.max)...(.max))).isEmpty || !ordered, "published once on a shared store")
        var started = PublishOrder(after: .max, isOrdered: ordered)
        #expect(!started.isWaiting)
        _ = started.add([])
    }
}
