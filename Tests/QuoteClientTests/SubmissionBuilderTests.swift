import QuoteClient
import QuoteCore
import Testing

@Suite("SubmissionBuilder")
struct SubmissionBuilderTests {
    @Test("An empty submission is refused with every problem at once, before anything is sent")
    func everyProblemAtOnce() throws {
        let error = try #require(throws: QuotedError.self) { try SubmissionBuilder().build() }
        #expect(error.code == .invalidSubmission)
        #expect(
            Set(error.problems.map(\.field))
                == ["customer.name", "customer.email", "customer.address", "car.make", "car.model", "services"])
        #expect(error.message == "the submission has 6 problems")
    }

    @Test("An implausible email, an impossible year and an empty service name are each named")
    func wrongValues() throws {
        let error = try #require(throws: QuotedError.self) {
            try SubmissionBuilder()
                .customer(name: "Ann", email: "bad", address: "1 Main Street")
                .car(make: "Toyota", model: "Camry", year: 3015)
                .service(" ")
                .build()
        }
        #expect(error.problems.map(\.field) == ["customer.email", "car.year", "services[0]"])
    }

    @Test("A complete submission builds, fluently, with a fresh idempotency key unless one is given")
    func builds() throws {
        let base = SubmissionBuilder()
            .customer(name: "John Lee", email: "john.lee@example.com", address: "12 Elm Street")
            .car(make: "Toyota", model: "Camry", year: 2015, trim: "LE")
            .service("Oil Change")
            .service("Brake Inspection")
            .coupon("WELCOME10")
        let first = try base.build()
        let second = try base.build()
        #expect(first.submission.services == ["Oil Change", "Brake Inspection"])
        #expect(first.submission.coupon == "WELCOME10")
        #expect(first.booking == .none)
        #expect(first.idempotencyKey != second.idempotencyKey)
        let keyed = try base.idempotencyKey("order-7").book(wait: true).build()
        #expect(keyed.idempotencyKey == "order-7")
        #expect(keyed.booking == .bookOrWait)
        // Each step returns a new builder: the base is unchanged.
        #expect(try base.build().booking == .none)
    }
}
