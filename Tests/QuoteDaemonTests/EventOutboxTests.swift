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

    @Test("alone on its store, events no one can receive take their turn unsent; later ones are sent as written")
    func unheardEventsPass() async throws {
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
        "on a shared store, no one listening, a commit takes its turn at once, earlier numbers unread included; someone listening, the order waits for the log again"
    )
    func sharedStoreUnheard() async throws {
        var outbox = outbox(ordered: true)
        let others = encoder.encodeEvents(await commit("theirs"))
        let unheard = outbox.add(committed: await commit("ours", book: true))
        #expect(unheard.send.isEmpty && unheard.released == 6, "1 and 2, another daemon's, never read")
        #expect(outbox.lastPublished == 6 && !outbox.isWaiting)
        #expect(outbox.add(read: others, after: 0).released == 0, "read late: already had their turn")

        // Someone connects: what comes after another daemon's commit waits for it, encoded.
        outbox.listened = true
        let theirs = encoder.encodeEvents(await commit("theirs again"))
        let own = await commit("ours again")
        let expected = encoder.encodeEvents(own)
        let held = outbox.add(committed: own)
        #expect(held.send.isEmpty && held.released == 0 && outbox.isWaiting)
        let release = outbox.add(read: theirs, after: 6)
        let asWritten = release.send == theirs + expected
        #expect(asWritten, "sent \(release.send.map(\.seq)), each as the encoder writes it")
        #expect(release.released == 4 && release.skipped == 0 && !outbox.isWaiting)
    }

    @Test("when the last listener goes, what was held for the log takes its turn at once")
    func heldEventsPassWhenNoOneListens() async throws {
        var outbox = outbox(ordered: true)
        outbox.listened = true
        _ = await commit("theirs")
        #expect(outbox.add(committed: await commit("ours")).released == 0 && outbox.isWaiting)
        outbox.listened = false
        let passed = outbox.passUnheard()
        #expect(passed.send.isEmpty && passed.released == 4 && outbox.lastPublished == 4 && !outbox.isWaiting)
        #expect(outbox.passUnheard().released == 0)
    }

    @Test("no one listening, the log's last number as the tail saw it, and reads that come late, pass unseen")
    func passUnheardThrough() async throws {
        var outbox = outbox(ordered: true)
        let theirs = encoder.encodeEvents(await commit("theirs"))
        #expect(outbox.passUnheard(through: 2).released == 2 && outbox.lastPublished == 2)
        let more = encoder.encodeEvents(await commit("more"))
        let read = outbox.add(read: theirs + more, after: 0)
        #expect(read.send.isEmpty && read.released == 2 && outbox.lastPublished == 4)
        outbox.listened = true
        let heard = outbox.passUnheard(through: 10)
        #expect(heard.released == 0 && outbox.lastPublished == 4, "someone listens: the tail reads them")
    }

    @Test("a read of the log that skips pruned numbers says how many")
    func readsSkipPruned() async throws {
        var outbox = outbox(ordered: true)
        outbox.listened = true
        let first = encoder.encodeEvents(await commit("first"))
        #expect(outbox.add(read: first, after: 0).send == first)
        // The next commit's two events leave the log before they are read.
        _ = await commit("second")
        let third = encoder.encodeEvents(await commit("third"))
        let later = outbox.add(read: third, after: 2)
        #expect(later.skipped == 2 && later.released == 2 && later.send == third)
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
