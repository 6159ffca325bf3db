import Foundation
import QuoteCore
import QuoteStore
import QuoteWire
import Testing

@Suite("The wire codec")
struct WireCodecTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000.5)

    static func quote(completed: Bool) throws -> Quote {
        var builder = QuoteBuilder()
        builder.setCustomer(
            name: "John \"JL\" Lee\n", email: "john.lee@example.com", address: "1 Infinite Loop, Cupertino ☀︎")
        builder.setCar(make: "Toyota", model: "Corolla", year: 2012)
        builder.addService("Oil Change")
        builder.addService("strange noise")
        builder.setMechanic("Joe Murphy")
        builder.setCoupon("WELCOME10")
        let request = try builder.build(in: .standard, at: now)
        var quote = try Quote(id: QuoteID(42), request: request, submittedAt: now).priced(currency: .usd, at: now)
        guard completed else { return quote }
        quote = try quote.resolved(with: Resolution(trim: "LE", price: Money(cents: 6_625)), in: .standard, at: now)
        quote = try quote.booked(with: Catalog.standard.mechanic(named: "Joe Murphy")!, at: now)
        return try quote.completed(at: now)
    }

    @Test("hand-written replies decode back to the same values with JSONDecoder", arguments: [false, true])
    func replyRoundTrip(completed: Bool) throws {
        let codec = WireCodec()
        var reply = WireReply.success(.string("c-1"))
        reply.quote = WireQuote(try Self.quote(completed: completed))
        reply.history = [
            .init(from: nil, to: "submitted", at: Self.now, seq: 1),
            .init(from: "submitted", to: "pending", at: Self.now, seq: 2),
        ]
        reply.replayed = true
        reply.bookingError = WireError(
            code: .init(rawValue: "no_mechanic_available"), message: "none",
            problems: [Problem(field: "a", message: "b")])
        reply.quotes = [reply.quote!]
        reply.next = 42
        reply.mechanics = [.init(id: 1, name: "Steve", skill: "junior", busy: false, quoteId: nil, freeSince: Self.now)]
        reply.services = Catalog.standard.services.map(WireReply.service)
        reply.counts = ["ready": 3, "pending": 1]
        reply.events = [
            WireEvent(
                seq: 7, type: "quote.ready", at: Self.now, quoteId: 42, from: "pending", to: "ready", quote: reply.quote
            )
        ]
        reply.lastSeq = 7
        reply.pong = true
        let bytes = codec.encode(reply)
        let decoded = try codec.decode(WireReply.self, from: bytes)
        #expect(decoded == reply)
        #expect(codec.encode(decoded) == bytes)
        #expect(try JSONSerialization.jsonObject(with: Data(bytes)) is [String: Any])
    }

    @Test("a numeric request id is echoed as a number, and errors keep every problem")
    func errorsAndIds() throws {
        let codec = WireCodec()
        let error = WireError(
            QuoteError(
                .invalidSubmission, "2 problems",
                problems: [Problem(field: "x", message: "y"), Problem(field: "z", message: "\u{1}")]))
        let bytes = codec.encode(WireReply.failure(.number(17), error))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""id":17"#))
        #expect(text.contains(#"\u0001"#))
        #expect(try codec.decode(WireReply.self, from: bytes).error == error)
    }

    @Test("requests are checked per operation, with every problem listed")
    func requestValidation() throws {
        let codec = WireCodec()
        let missing = try codec.decodeRequest(Array(#"{"v":1,"op":"list","state":"lost","limit":0}"#.utf8)).get()
        let error = #expect(throws: WireError.self) { try missing.action() }
        #expect(error?.code == .invalidRequest)
        #expect(error?.problems?.map(\.field) == ["state", "limit"])
        #expect(throws: WireError.self) {
            try codec.decodeRequest(Array(#"{"v":1,"op":"get","quoteId":"7"}"#.utf8)).get()
        }
        let resolve = try codec.decodeRequest(Array(#"{"v":1,"op":"resolve","quoteId":7,"price":"66.25"}"#.utf8)).get()
        #expect(try resolve.action() == .write(.resolve(QuoteID(7), Resolution(price: Money(cents: 6_625)))))
        guard case .failure(let notJSON) = codec.decodeRequest(Array("nope".utf8)) else {
            Issue.record("not JSON was accepted")
            return
        }
        #expect(notJSON.code == .invalidJSON)
    }
}
