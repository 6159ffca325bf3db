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
        let release = outbox.add(read: others, after: 0)
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
        #expect(outbox.add(read: first, after: 0).released == 2)
        // The next commit's two events leave the log before they are read.
        _ = await commit("second")
        let later = outbox.add(read: encoder.encodeEvents(await commit("third")), after: 2)
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
}
