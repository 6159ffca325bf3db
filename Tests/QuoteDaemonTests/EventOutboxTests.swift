import Logging
import QuoteCore
import QuoteStoreSQLite
import QuoteWire
import Testing

@testable import QuoteDaemon

@Suite("What leaves the events socket, listened to or not")
struct EventOutboxTests {
    let state: StateDirectory
    let committer: BatchCommitter<RequestTicket>
    let decoder: RequestDecoder
    let encoder: ReplyEncoder

    init() throws {
        state = try StateDirectory()
        let logger = Logger(label: "test.outbox")
        let store = try SQLiteQuoteStore(path: state.configuration.databasePath, catalog: .standard, logger: logger)
        committer = try BatchCommitter(
            store: store, catalog: LiveCatalog(.standard), logger: logger, daemonTicket: RequestTicket.daemon)
        decoder = RequestDecoder(maxMessageBytes: state.configuration.maxMessageBytes)
        encoder = ReplyEncoder(maxReplyBytes: state.configuration.maxReplyBytes)
    }

    /// One submission, committed by the real store: two events, `quote.submitted` and
    /// `quote.ready`, or three more when `book`ed.
    private func commit(_ key: String, book: Bool = false) async -> ReplyEncoder.EncodedReplies {
        let body =
            #"{"v":1,"op":"submit","id":"w","idempotencyKey":"\#(key)","book":\#(book),"customer":{"name":"Reza","email":"reza@example.com","address":"1 Main St"},"car":{"make":"Honda","model":"Civic","year":2015,"trim":"EX"},"services":["Oil Change"]}"#
        var batch = committer.newBatch()
        decoder.decode([Array("client".utf8), [], Array(body.utf8)], userId: nil, into: &batch)
        return encoder.encodeReplies(await committer.commit(batch))
    }

    private func outbox(ordered: Bool) -> EventOutbox {
        EventOutbox(
            after: 0, isOrdered: ordered, window: EventWindow(capacity: 1_000, budget: 1 << 20), encoder: encoder)
    }

    @Test(
        "alone on its store, events no one can receive take their turn unencoded and unsent; later ones are sent as written"
    )
    func unheardEventsAreNotEncoded() async throws {
        var outbox = outbox(ordered: false)
        let unheard = outbox.add(committed: await commit("a"))
        #expect(unheard.send.isEmpty && unheard.released == 2)
        #expect(outbox.lastPublished == 2)

        outbox.listened = true
        let encoded = await commit("b", book: true)
        let heard = outbox.add(committed: encoded)
        let asWritten = heard.send == encoder.encodeEvents(encoded)
        #expect(asWritten, "sent \(heard.send.map(\.seq)), each as the encoder writes it")
        #expect(heard.send.map(\.seq) == [3, 4, 5, 6] && heard.released == 4)
    }

    @Test(
        "on a shared store, its own events held while no one listened are encoded when someone connects before their turn: no gap"
    )
    func heldEventsAreEncodedAtTheirTurn() async throws {
        var outbox = outbox(ordered: true)
        // Another daemon's commit comes first in the log: this one's own waits for it.
        let others = encoder.encodeEvents(await commit("theirs"))
        let own = await commit("ours", book: true)
        let expected = encoder.encodeEvents(own)
        let held = outbox.add(committed: own)
        #expect(held.send.isEmpty && held.released == 0 && outbox.isWaiting)

        outbox.listened = true
        let release = outbox.add(read: others.map(OutgoingEvent.encoded), after: 0)
        let asWritten = release.send == others + expected
        #expect(asWritten, "sent \(release.send.map(\.seq)), each as the encoder writes it")
        #expect(release.released == 6 && release.skipped == 0 && !outbox.isWaiting)

        // No one listens any longer: what comes is passed over, in order.
        outbox.listened = false
        let next = outbox.add(committed: await commit("later"))
        #expect(next.send.isEmpty && next.released == 2 && outbox.lastPublished == 8)
    }

    @Test("a read of the log while no one listens is passed over too, and what it skipped is counted")
    func readsPassedOver() async throws {
        var outbox = outbox(ordered: true)
        let first = encoder.encodeEvents(await commit("first"))
        #expect(outbox.add(read: first.map(OutgoingEvent.encoded), after: 0).released == 2)
        // The next commit's two events leave the log before they are read.
        _ = await commit("second")
        let later = outbox.add(read: encoder.encodeEvents(await commit("third")).map(OutgoingEvent.encoded), after: 2)
        #expect(later.skipped == 2 && later.released == 2 && later.send.isEmpty)
        #expect(outbox.lastPublished == 6)
    }

    @Test("when the last connection goes, the window forgets the queues that went with it")
    func windowBeginsEmptyAgain() async throws {
        let encoded = await commit("big")
        let size = encoder.encodeEvents(encoded).map(\.byteCount).max() ?? 0
        // Room for one of the submission's two events.
        var outbox = EventOutbox(
            after: 0, isOrdered: false, window: EventWindow(capacity: 10, budget: size + size / 2), encoder: encoder,
            listened: true)
        #expect(outbox.add(committed: encoded).send.count == 1)
        #expect(outbox.window.skipped == 1)
        outbox.listened = false
        outbox.listened = true
        let next = outbox.add(committed: await commit("next"))
        #expect(next.send.map(\.seq) == [3], "the first fits again: nothing is queued for anyone")
    }

    /// Events read from the log as their numbers alone, as the tail hands them over while no
    /// one listens.
    private static func numbers(_ events: [PublishedEvent]) -> [OutgoingEvent] {
        events.map { .unread(seq: $0.seq) }
    }

    @Test(
        "another daemon's events read as numbers alone, while no one listened, are read again before anything after them goes to someone who came"
    )
    func numbersAreReadAgainForSomeoneWhoCame() async throws {
        var outbox = outbox(ordered: true)
        let others = encoder.encodeEvents(await commit("theirs"))
        #expect(outbox.add(committed: await commit("ours", book: true)).released == 0)
        let numbers = outbox.add(read: Self.numbers(others), after: 0)
        #expect(numbers.released == 6 && numbers.send.isEmpty, "no one listens: everything passes")
        #expect(outbox.lastPublished == 6)

        // Someone comes; the next read still brings numbers alone (read before it came).
        let more = encoder.encodeEvents(await commit("more"))
        let own2 = await commit("ours again")
        outbox.listened = true
        #expect(outbox.flush().rereadAfter == nil, "nothing has its turn yet")
        #expect(outbox.add(committed: own2).send.isEmpty)
        let blocked = outbox.add(read: Self.numbers(more), after: 6)
        #expect(blocked.send.isEmpty && blocked.released == 0 && blocked.rereadAfter == 6)
        #expect(outbox.add(read: Self.numbers(more), after: 6).rereadAfter == 6, "asked again after each read")
        let reread = outbox.add(read: more.map(OutgoingEvent.encoded), after: 6)
        let asWritten = reread.send == more + encoder.encodeEvents(own2)
        #expect(asWritten, "sent \(reread.send.map(\.seq))")
        #expect(reread.rereadAfter == nil && outbox.lastPublished == 10)
    }

    @Test("a number alone never replaces its event's body: its own commit, held, goes as committed")
    func numbersNeverReplaceBodies() async throws {
        var outbox = outbox(ordered: true)
        let others = encoder.encodeEvents(await commit("theirs"))
        let own = await commit("ours")
        let expected = encoder.encodeEvents(own)
        #expect(outbox.add(committed: own).send.isEmpty, "3 and 4 wait for 1 and 2")
        outbox.listened = true
        // The log read as numbers alone, 1 to 4, before anyone came; then again, encoded, 1 and 2.
        let blocked = outbox.add(read: Self.numbers(others + expected), after: 0)
        #expect(blocked.send.isEmpty && blocked.rereadAfter == 0)
        let sent = outbox.add(read: others.map(OutgoingEvent.encoded), after: 0)
        let asWritten = sent.send == others + expected
        #expect(asWritten, "sent \(sent.send.map(\.seq)), 3 and 4 as committed")
    }

    @Test("a number alone waiting for a read again passes once no one listens")
    func numbersPassOnceNoOneListens() async throws {
        var outbox = outbox(ordered: true)
        let others = encoder.encodeEvents(await commit("theirs"))
        outbox.listened = true
        let blocked = outbox.add(read: Self.numbers(others), after: 0)
        #expect(blocked.send.isEmpty && blocked.released == 0 && blocked.rereadAfter == 0)
        outbox.listened = false
        let passed = outbox.flush()
        #expect(passed.released == 2 && passed.send.isEmpty && passed.rereadAfter == nil)
        #expect(outbox.lastPublished == 2)

        outbox.listened = true
        let later = encoder.encodeEvents(await commit("later"))
        let sent = outbox.add(read: Self.numbers(others) + later.map(OutgoingEvent.encoded), after: 0)
        #expect(sent.send == later, "the bodies of 3 and 4 go; 1 and 2 had their turn")
    }
}
