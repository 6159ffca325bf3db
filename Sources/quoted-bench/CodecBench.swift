import ArgumentParser
import Foundation
import QuoteCore
import QuoteWire

/// The cost of Foundation's JSON coders on the types the daemon stores and sends.
struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec", abstract: "JSON encode/decode rates of stored quotes.")

    @Option(help: "Iterations.") var count = 20_000

    func run() throws {
        var builder = QuoteBuilder()
        builder.setCustomer(name: "Bench Customer", email: "bench@example.com", address: "1 Loop Rd")
        builder.setCar(make: "Honda", model: "Civic", year: 2015, trim: "EX")
        builder.addService("Oil Change")
        builder.addService("Brake Inspection")
        let request = try builder.build(in: .standard, at: Date())
        let quote = try Quote(id: QuoteID(1), request: request, submittedAt: Date()).priced(currency: .usd, at: Date())
        for strategy in ["default", "ms"] {
            let encoder = JSONEncoder()
            if strategy == "ms" { encoder.dateEncodingStrategy = .millisecondsSince1970 }
            let clock = ContinuousClock()
            var bytes = 0
            let elapsed = try clock.measure {
                for _ in 0..<count { bytes = try encoder.encode(quote).count }
            }
            print(
                String(
                    format: "encode Quote (%@ dates, %d bytes): %.0f/s", strategy, bytes,
                    Double(count) / elapsed.seconds))
        }
        let encoder = JSONEncoder()
        let data = try encoder.encode(quote)
        let decoder = JSONDecoder()
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for _ in 0..<count { _ = try decoder.decode(Quote.self, from: data) }
        }
        print(String(format: "decode Quote: %.0f/s", Double(count) / elapsed.seconds))
        let request2 = try clock.measure {
            for _ in 0..<count { _ = try encoder.encode(request) }
        }
        print(String(format: "encode QuoteRequest: %.0f/s", Double(count) / request2.seconds))
        let stage = try clock.measure {
            for _ in 0..<count { _ = try encoder.encode(quote.stage) }
        }
        print(String(format: "encode QuoteStage: %.0f/s", Double(count) / stage.seconds))
        // The daemon's hot path: one submit request frame, as quoted-bench load sends it.
        let frame = RequestFactory(runTag: "codec").body(.submit, id: 1)
        let codec = WireCodec()
        let decode = clock.measure {
            for _ in 0..<count { _ = codec.decodeRequest(frame) }
        }
        print(
            String(
                format: "decode submit request (WireCodec, %d bytes): %.0f/s", frame.count,
                Double(count) / decode.seconds))
        // The other half of the hot path: a reply carrying a completed quote, as the daemon
        // writes it for `complete` (the event body carries the same quote).
        guard let joe = Catalog.standard.mechanic(named: "Joe Murphy") else { throw ValidationError("no Joe Murphy") }
        let completed = try quote.booked(with: joe, at: Date()).completed(at: Date())
        let reply = WireReply.success(.string("bench-1"))
        var replyBytes = 0
        let encodeReply = clock.measure {
            for _ in 0..<count {
                replyBytes = codec.encode(reply, quote: codec.encodeQuote(completed, currency: .usd)).count
            }
        }
        print(
            String(
                format: "encode complete reply (WireCodec, %d bytes): %.0f/s", replyBytes,
                Double(count) / encodeReply.seconds))
    }
}
