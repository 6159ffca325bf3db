import Foundation
import QuoteCore
import QuoteStore
import QuoteWire
import Testing

/// The scanner reads fields by the order the writer writes them in: these tests read what
/// the writer wrote, so that a change to either shows here.
@Suite("The reply scanner")
struct ReplyScannerTests {
    let codec = WireCodec()

    private var quote: Quote {
        get throws {
            let request = try QuoteBuilder(
                Submission(
                    customer: .init(name: "Reza", email: "reza@example.com", address: "1 Main St"),
                    car: .init(make: "Honda", model: "Civic", year: 2015), services: ["Oil Change"])
            ).build(in: .standard, at: Date())
            return Quote(
                id: QuoteID(42), request: request, stage: try .priced(request, currency: .usd), submittedAt: Date(),
                updatedAt: Date())
        }
    }

    @Test("a write's reply gives its request id, ok, the quote's id and its state")
    func success() throws {
        let quote = try quote
        let frame = codec.encode(WireReply.success(.number(7)), quote: codec.encodeQuote(quote, currency: .usd))
        let scanner = ReplyScanner(bytes: frame)
        #expect(scanner.requestID == 7)
        #expect(scanner.isOK)
        #expect(scanner.quoteID == 42)
        #expect(scanner.state == Substring(quote.status.rawValue))
    }

    @Test("a refusal gives its request id, not ok, and its code")
    func refusal() {
        let frame = codec.encode(
            WireReply.failure(.number(9), WireError(QuoteError(.mechanicBusy, "Steve is booked"))))
        let scanner = ReplyScanner(bytes: frame)
        #expect(scanner.requestID == 9)
        #expect(!scanner.isOK)
        #expect(scanner.errorCode == "mechanic_busy")
        #expect(scanner.quoteID == nil)
    }

    @Test("an event gives its quote's id")
    func event() throws {
        let quote = try quote
        let event = StoredEvent(seq: 3, at: Date(), kind: .quote(from: nil, quote: quote), by: nil)
        let logged = ReplyEncoder(maxReplyBytes: 1 << 20).encodeLogged([event], currency: .usd)
        let scanner = ReplyScanner(bytes: try #require(logged.first?.body))
        #expect(scanner.eventQuoteID == 42)
    }

    @Test(
        "a number beyond Int64 reads as absent, not as a crash",
        arguments: [
            #"{"v":1,"id":9223372036854775808,"ok":false}"#,
            #"{"v":1,"id":99999999999999999999999999,"ok":true,"quote":{"id":123456789012345678901234}}"#,
            #"{"seq":1,"quoteId":18446744073709551616}"#,
        ])
    func numbersBeyondInt64(_ text: String) {
        let scanner = ReplyScanner(bytes: Array(text.utf8))
        #expect(scanner.requestID == nil)
        #expect(scanner.quoteID == nil)
        #expect(scanner.eventQuoteID == nil)
    }

    @Test("the largest Int64 still reads")
    func largestNumber() {
        let scanner = ReplyScanner(bytes: Array(#"{"v":1,"id":9223372036854775807,"ok":true}"#.utf8))
        #expect(scanner.requestID == .max)
    }
}
