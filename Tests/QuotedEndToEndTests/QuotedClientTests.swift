import Foundation
import QuoteClient
import QuoteCore
import QuoteWire
import Testing
import ZeroMQ

/// The `QuoteClient` library (`Quoted`, `SubmissionBuilder`) against a real quoted.
@Suite("The Swift client library against a real quoted", .serialized, .timeLimit(.minutes(3)))
struct QuotedClientTests {
    static func johnLee() -> SubmissionBuilder {
        SubmissionBuilder()
            .customer(name: "John Lee", email: "john.lee@example.com", address: "12 Elm Street")
            .car(make: "Toyota", model: "Camry", year: 2015, trim: "LE")
            .service("Oil Change")
    }

    @Test("Submit, book, complete: typed outcomes, and a retried submission is the same quote")
    func submitBookComplete() async throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let quoted = try Quoted(.init(endpoints: [daemon.commands], events: [daemon.events]))
        let submission = try Self.johnLee().build()
        let submitted = try await quoted.submit(submission)
        #expect(submitted.quote.state == "ready")
        #expect(submitted.quote.priceCents == 3_500)
        #expect(!submitted.replayed)
        let again = try await quoted.submit(submission)
        #expect(again.replayed && again.quote.id == submitted.quote.id)

        let booked = try await quoted.book(submitted.quote.id)
        #expect(booked.quote.state == "booked")
        let completed = try await quoted.complete(submitted.quote.id)
        #expect(completed.quote.receipt?.totalCents == 3_500)
        let (quote, history) = try await quoted.quote(submitted.quote.id)
        #expect(quote.state == "completed")
        #expect(history.map(\.to) == ["submitted", "ready", "booked", "completed"])
        #expect(try await quoted.ping() == 6)
    }

    @Test("A refusal is a typed error carrying quoted's code and every problem")
    func refusals() async throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let quoted = try Quoted(.init(endpoints: [daemon.commands], events: [daemon.events]))
        let unknown = try await #require(throws: QuotedError.self) { _ = try await quoted.book(9_999) }
        #expect(unknown.code == .refused)
        #expect(unknown.refusal?.code.rawValue == "unknown_quote")

        let submission = try Self.johnLee().mechanic("Nobody").coupon("NOPE").build()
        let refused = try await #require(throws: QuotedError.self) { _ = try await quoted.submit(submission) }
        #expect(refused.refusal?.code.rawValue == "not_in_catalog")
        #expect(Set(refused.problems.map(\.field)) == ["mechanic", "coupon"])
    }

    @Test("A submission whose reply never came is retried with its key until quoted answers: one quote")
    func retriesWithTheIdempotencyKey() async throws {
        let port = try freePort()
        // Retries for up to a minute: the deadline for a daemon to start on a loaded machine (a
        // full CI run took more than the 12 s of 40), not a measure of anything.
        let quoted = try Quoted(
            .init(endpoints: ["tcp://127.0.0.1:\(port)"], timeout: .milliseconds(300), retries: 200))
        let submission = try Self.johnLee().build()
        let outcome = Task { try await quoted.submit(submission) }
        // A peer that takes requests and never answers: the first attempt, then its retry,
        // under the same id and idempotency key. Its context ends with it, freeing the port.
        // On a thread of its own: blocking a thread of the shared cooperative pool (two on
        // this machine) could keep the submission from ever being sent.
        let attempts = try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.unanswered(2, on: port) }) }.start()
        }
        #expect(attempts[0] == attempts[1], "a retry is the same request")
        #expect(attempts[0].contains(submission.idempotencyKey))
        let daemon = try DaemonProcess(endpoint: "tcp://127.0.0.1:\(port)")
        defer { #expect(daemon.stop() == 0) }
        let quote = try await outcome.value.quote
        let all = try await quoted.quotes()
        #expect(all.map(\.id) == [quote.id], "one quote for every attempt")
    }

    /// Binds a ROUTER on `port`, receives `count` requests without answering any, and closes
    /// it (its context terminated, so the port is free again); returns the requests' bodies.
    static func unanswered(_ count: Int, on port: Int) throws -> [String] {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        try router.set(.receiveTimeout, 20_000)
        try router.bind("tcp://127.0.0.1:\(port)")
        var bodies: [String] = []
        for _ in 0..<count {
            let message = try #require(try router.receiveMultipart())
            bodies.append(String(decoding: try #require(message.frames.last), as: UTF8.self))
        }
        router.close()
        return bodies
    }

    @Test("Without quoted, a read times out after its retries with a typed error")
    func timesOut() async throws {
        let port = try freePort()
        let quoted = try Quoted(.init(endpoints: ["tcp://127.0.0.1:\(port)"], timeout: .milliseconds(100), retries: 2))
        let error = try await #require(throws: QuotedError.self) { _ = try await quoted.stats() }
        #expect(error.code == .timedOut)
        #expect(error.message.contains("no reply from quoted at tcp://127.0.0.1:\(port)"), "\(error)")
        // A write that cannot be retried says what the caller does not know.
        let booking = try await #require(throws: QuotedError.self) { _ = try await quoted.book(1) }
        #expect(booking.code == .timedOut)
        #expect(booking.message.contains("may or may not have been applied"), "\(booking)")
    }

    @Test("events(since:) is gap-free: history replayed, then live, each event once, in order")
    func eventsAreGapFree() async throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let quoted = try Quoted(.init(endpoints: [daemon.commands], events: [daemon.events]))
        for _ in 0..<3 { _ = try await quoted.submit(try Self.johnLee().build()) }
        var seqs: [Int64] = []
        var types: [String] = []
        for try await event in quoted.events(since: 0) {
            seqs.append(event.seq)
            types.append(event.type)
            // After the history, something new, received live or replayed.
            if event.seq == 6 { _ = try await quoted.submit(try Self.johnLee().book().build()) }
            if seqs.count == 10 { break }
        }
        #expect(seqs == Array(1...10))
        #expect(types.suffix(4) == ["quote.submitted", "quote.ready", "quote.booked", "mechanic.busy"])
    }
}
