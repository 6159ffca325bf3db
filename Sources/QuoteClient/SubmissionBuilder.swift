import Foundation
public import QuoteCore

/// Builds a quote submission step by step, fluently, and checks it whole before anything is
/// sent: ``build()`` throws one ``QuotedError`` listing every problem at once (as quoted
/// would), not the first it meets.
///
/// ```swift
/// let submission = try SubmissionBuilder()
///     .customer(name: "John Lee", email: "john.lee@example.com", address: "12 Elm Street")
///     .car(make: "Toyota", model: "Camry", year: 2015, trim: "LE")
///     .service("Oil Change")
///     .service("Brake Inspection")
///     .coupon("WELCOME10")
///     .build()
/// ```
///
/// It checks what needs no catalog (names present, a plausible email, at least one service, a
/// plausible year); quoted checks the rest (services, mechanic and coupon against its catalog).
public struct SubmissionBuilder: Sendable {
    private var submission = Submission()
    private var key: String?
    private var booking: QuoteSubmission.Booking = .none

    /// An empty submission.
    public init() {}

    /// Who asks for the quote.
    public func customer(name: String, email: String, address: String) -> SubmissionBuilder {
        var next = self
        next.submission.customer = Submission.CustomerInput(name: name, email: email, address: address)
        return next
    }

    /// The car to repair; a quote without year and trim waits for support to resolve it.
    public func car(make: String, model: String, year: Int? = nil, trim: String? = nil) -> SubmissionBuilder {
        var next = self
        next.submission.car = Submission.CarInput(make: make, model: model, year: year, trim: trim)
        return next
    }

    /// One more service, by its catalog name.
    public func service(_ name: String) -> SubmissionBuilder {
        var next = self
        next.submission.services = (submission.services ?? []) + [name]
        return next
    }

    /// The mechanic the customer would like.
    public func mechanic(_ name: String) -> SubmissionBuilder {
        var next = self
        next.submission.mechanic = name
        return next
    }

    /// A coupon code.
    public func coupon(_ code: String) -> SubmissionBuilder {
        var next = self
        next.submission.coupon = code
        return next
    }

    /// The idempotency key; without one, ``build()`` makes a new one (``IdempotencyKey``), so
    /// that retries of this submission never create a second quote.
    public func idempotencyKey(_ key: String) -> SubmissionBuilder {
        var next = self
        next.key = key
        return next
    }

    /// Books a mechanic as soon as the quote is ready; with `wait`, waits in line when no
    /// mechanic is free.
    public func book(wait: Bool = false) -> SubmissionBuilder {
        var next = self
        next.booking = wait ? .bookOrWait : .book
        return next
    }

    /// The submission, or a ``QuotedError`` (``QuotedError/Code/invalidSubmission``) with every
    /// problem found.
    public func build() throws(QuotedError) -> QuoteSubmission {
        var problems: [Problem] = []
        let customer = submission.customer
        for (field, value) in [("name", customer?.name), ("email", customer?.email), ("address", customer?.address)]
        where value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true {
            problems.append(Problem(field: "customer.\(field)", message: "is required"))
        }
        if let email = customer?.email, !email.isEmpty, !Customer.isPlausibleEmail(email) {
            problems.append(Problem(field: "customer.email", message: "\"\(email)\" is not a plausible email address"))
        }
        let car = submission.car
        for (field, value) in [("make", car?.make), ("model", car?.model)]
        where value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true {
            problems.append(Problem(field: "car.\(field)", message: "is required"))
        }
        if let year = car?.year, !(1886...2100).contains(year) {
            problems.append(Problem(field: "car.year", message: "\(year) is not a plausible model year"))
        }
        if (submission.services ?? []).isEmpty {
            problems.append(Problem(field: "services", message: "at least one service is required"))
        }
        for (index, name) in (submission.services ?? []).enumerated()
        where name.trimmingCharacters(in: .whitespaces).isEmpty {
            problems.append(Problem(field: "services[\(index)]", message: "is empty"))
        }
        guard problems.isEmpty else { throw QuotedError(problems: problems) }
        return QuoteSubmission(
            submission: submission, idempotencyKey: key ?? IdempotencyKey.make(), booking: booking)
    }
}

/// A checked submission, ready for ``Quoted/submit(_:)``.
public struct QuoteSubmission: Sendable, Hashable {
    /// What to do once the quote is priced.
    public enum Booking: Sendable, Hashable {
        /// Leave it ready.
        case none
        /// Book a mechanic at once; if none is free the quote stays ready.
        case book
        /// Book a mechanic at once, or wait in line for one.
        case bookOrWait
    }

    /// The request as it goes on the wire.
    public let submission: Submission
    /// The key a retry is sent with: quoted answers a repeat with the first quote.
    public let idempotencyKey: String
    /// Whether to book once priced, and whether to wait in line for a mechanic.
    public let booking: Booking
}
