import Foundation
import QuoteCore
import QuoteWire
import Testing

/// What a client makes of a reply frame that is not the usual success: read from the JSON
/// the daemon writes, as a client decodes it.
@Suite("Typed replies")
struct ReplyTests {
    private static func answer(_ json: String, to operation: QuoteWire.Operation) throws -> Reply? {
        Reply(try WireCodec().decode(WireReply.self, from: Array(json.utf8)), answering: operation)
    }

    /// A quote as the daemon writes it in a reply.
    private static let quote: String = {
        guard let quote = try? WireCodecTests.quote(completed: false) else { return "null" }
        return String(decoding: WireCodec().encodeQuote(quote, currency: .usd).json, as: UTF8.self)
    }()

    @Test("a refusal is no answer: its error says why")
    func refusal() throws {
        let json = #"{"v":1,"id":1,"ok":false,"error":{"code":"unknown_quote","message":"no quote 9"}}"#
        #expect(try Self.answer(json, to: .get) == nil)
    }

    @Test(
        "a write's reply without its quote is not an answer",
        arguments: [QuoteWire.Operation.submit, .book, .complete, .get])
    func writeWithoutQuote(operation: QuoteWire.Operation) throws {
        #expect(try Self.answer(#"{"v":1,"id":1,"ok":true}"#, to: operation) == nil)
    }

    @Test("a replayed submission says so, with the first one's quote")
    func replayed() throws {
        let answer = try Self.answer(#"{"v":1,"id":1,"ok":true,"quote":\#(Self.quote),"replayed":true}"#, to: .submit)
        guard case .change(let change) = answer else {
            Issue.record("not a change: \(String(describing: answer))")
            return
        }
        #expect(change.replayed && change.quote.id == 42 && change.waitPosition == nil)
    }

    @Test("a ping whose store is down answers with what the store said")
    func storeDown() throws {
        let json = #"{"v":1,"id":1,"ok":true,"pong":true,"store":"down","storeError":"disk I/O error"}"#
        guard case .pong(.failure(let down)) = try Self.answer(json, to: .ping) else {
            Issue.record("not a store down")
            return
        }
        #expect(down.message == "disk I/O error")
        let up = #"{"v":1,"id":1,"ok":true,"pong":true,"store":"up","lastSeq":12}"#
        #expect(try Self.answer(up, to: .ping) == .pong(.success(12)))
    }

    @Test("a catalog applied gives its version and the quote a new mechanic took from the line")
    func catalogApplied() throws {
        let json = #"{"v":1,"id":1,"ok":true,"catalogVersion":5,"quote":\#(Self.quote)}"#
        guard case .catalogApplied(let version, let quote) = try Self.answer(json, to: .applyCatalog) else {
            Issue.record("not a catalog applied")
            return
        }
        #expect(version == 5 && quote?.id == 42)
        #expect(try Self.answer(#"{"v":1,"id":1,"ok":true}"#, to: .applyCatalog) == nil, "no version, no answer")
    }

    @Test("stats on an empty store are counts of nothing, with the log's last seq")
    func emptyStats() throws {
        let json = #"{"v":1,"id":1,"ok":true,"counts":{},"lastSeq":0,"mechanicCounts":{"busy":0,"free":3,"offDuty":0}}"#
        guard case .stats(let stats) = try Self.answer(json, to: .stats) else {
            Issue.record("not stats")
            return
        }
        #expect(stats.counts.isEmpty && stats.lastSeq == 0 && stats.mechanicCounts["free"] == 3)
    }
}
