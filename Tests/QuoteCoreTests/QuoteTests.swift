import Foundation
import QuoteCore
import Testing

@Suite("Quote states and transitions")
struct QuoteTests {
    /// The legal moves, written out independently of the implementation.
    static let legal: Set<[QuoteStatus]> = [
        [.submitted, .pending], [.submitted, .ready], [.pending, .ready], [.ready, .booked], [.booked, .completed],
        [.submitted, .cancelled], [.pending, .cancelled], [.ready, .cancelled], [.booked, .cancelled],
        [.ready, .waiting], [.waiting, .booked], [.waiting, .cancelled],
        // Out of line: the mechanic it named went off duty or retired.
        [.waiting, .ready],
        // Reassigned: to another mechanic, or to the front of the line.
        [.booked, .booked], [.booked, .waiting],
    ]

    /// A quote in `status`, reached through legal moves only.
    static func quote(in status: QuoteStatus) throws -> Quote {
        let complete = try Fixtures.reza().build(in: Fixtures.catalog, at: Fixtures.now)
        var incomplete = complete
        incomplete.car.trim = nil
        let now = Fixtures.now
        switch status {
        case .submitted: return Quote(id: QuoteID(1), request: complete, submittedAt: now)
        case .pending:
            return try Quote(id: QuoteID(1), request: incomplete, submittedAt: now).priced(currency: .usd, at: now)
        case .ready: return try quote(in: .submitted).priced(currency: .usd, at: now)
        case .booked: return try quote(in: .ready).booked(with: Fixtures.mechanic("Steve Brimington"), at: now)
        case .completed: return try quote(in: .booked).completed(at: now)
        case .cancelled: return try quote(in: .submitted).cancelled(reason: "changed my mind", at: now)
        case .waiting: return try quote(in: .ready).waiting(for: nil, at: now)
        }
    }

    /// Attempts the operation that leads to `target`.
    static func attempt(_ target: QuoteStatus, from quote: Quote) throws(QuoteError) -> Quote {
        let now = Fixtures.now
        switch target {
        case .submitted:
            // No operation leads back to submitted; the state machine is asked directly.
            guard quote.status.canMove(to: .submitted) else {
                throw .illegalTransition(from: quote.status, to: .submitted)
            }
            return quote
        case .pending:
            var request = quote.request
            request.car.trim = nil
            return try Quote(id: quote.id, request: request, stage: quote.stage, submittedAt: now, updatedAt: now)
                .priced(currency: .usd, at: now)
        case .ready:
            if quote.status == .submitted { return try quote.priced(currency: .usd, at: now) }
            if quote.status == .waiting { return try quote.unqueued(notice: "Joe Murphy is off duty.", at: now) }
            return try quote.resolved(with: Resolution(car: .init(trim: "EX")), in: Fixtures.catalog, at: now)
        case .booked:
            if quote.status == .booked { return try quote.reassigned(to: Fixtures.mechanic("Zane Marine"), at: now) }
            return try quote.booked(with: Fixtures.mechanic("Joe Murphy"), at: now)
        case .completed: return try quote.completed(at: now)
        case .cancelled: return try quote.cancelled(reason: nil, at: now)
        case .waiting:
            if quote.status == .booked { return try quote.requeued(at: now) }
            return try quote.waiting(for: nil, at: now)
        }
    }

    @Test(
        "every pair of states is allowed or refused as the table says", arguments: QuoteStatus.allCases,
        QuoteStatus.allCases)
    func transitionTable(from: QuoteStatus, to: QuoteStatus) throws {
        let start = try Self.quote(in: from)
        #expect(start.status == from)
        let isLegal = Self.legal.contains([from, to])
        #expect(from.canMove(to: to) == isLegal)
        do {
            let moved = try Self.attempt(to, from: start)
            #expect(isLegal, "\(from) -> \(to) should have been refused")
            if to != .submitted { #expect(moved.status == to) }
        } catch {
            #expect(!isLegal, "\(from) -> \(to) should have been allowed: \(error)")
            #expect(error.code == .illegalTransition)
            #expect(error.message.contains(from.rawValue) && error.message.contains(to.rawValue))
        }
    }

    @Test("price, mechanic and receipt exist only in the states that have them", arguments: QuoteStatus.allCases)
    func dataBelongsToStates(status: QuoteStatus) throws {
        let quote = try Self.quote(in: status)
        #expect((quote.price != nil) == [.ready, .booked, .completed, .waiting].contains(status))
        #expect((quote.waitingSince != nil) == (status == .waiting))
        #expect((quote.mechanic != nil) == [.booked, .completed].contains(status))
        #expect((quote.receipt != nil) == (status == .completed))
        #expect(quote.pendingReasons.isEmpty == (status != .pending))
    }

    @Test("the customer's message in the states the walkthrough below does not reach, word for word")
    func otherMessages() throws {
        let ready = try Self.quote(in: .ready)
        let joe = Fixtures.mechanic("Joe Murphy")
        #expect(
            try ready.waiting(for: joe, at: Fixtures.now).customerMessage
                == "Joe Murphy is busy; your quote is next in line for them and will be booked as soon as they are free."
        )
        #expect(
            try ready.waiting(for: nil, at: Fixtures.now).customerMessage
                == "All our mechanics are busy; your quote is in line and will be booked as soon as one is free.")
        #expect(try ready.cancelled(reason: nil, at: Fixtures.now).customerMessage == "Your quote has been cancelled.")
        let noticed = Quote(
            id: ready.id, request: ready.request, stage: ready.stage, submittedAt: ready.submittedAt,
            updatedAt: ready.updatedAt, notice: "Junior 1 is off duty.")
        #expect(
            noticed.customerMessage
                == "Junior 1 is off duty. Your quote is ready. The total for the services you have requested is: "
                + (ready.price?.formatted ?? "none"))
    }

    @Test("a quote waiting for a named mechanic is booked with them only, and waits only for one able")
    func namedWait() throws {
        let ready = try Self.quote(in: .ready)
        let joe = Fixtures.mechanic("Joe Murphy")
        let waiting = try ready.waiting(for: joe, at: Fixtures.now)
        #expect(waiting.waitingFor == joe)
        #expect(waiting.customerMessage.contains("Joe Murphy"))
        let other = #expect(throws: QuoteError.self) {
            try waiting.booked(with: Fixtures.mechanic("Steve Brimington"), at: Fixtures.now)
        }
        #expect(other?.code == .mechanicBusy)
        #expect(try waiting.booked(with: joe, at: Fixtures.now).mechanic == joe)
        var brakes = QuoteBuilder()
        brakes.setCustomer(name: "Ann", email: "ann@example.com", address: "1 Elm St")
        brakes.setCar(make: "Honda", model: "Civic", year: 2015, trim: "EX")
        brakes.addService("Brake Pad Replacement")
        let needsApprentice = try Quote(
            id: QuoteID(2), request: try brakes.build(in: Fixtures.catalog, at: Fixtures.now), submittedAt: Fixtures.now
        ).priced(currency: .usd, at: Fixtures.now)
        let unable = #expect(throws: QuoteError.self) {
            try needsApprentice.waiting(for: Fixtures.mechanic("Steve Brimington"), at: Fixtures.now)
        }
        #expect(unable?.code == .cannotPerform)
    }

    @Test("Reza's three junior services are priced automatically at $67.00")
    func rezaAutoPriced() throws {
        let request = try Fixtures.reza().build(in: Fixtures.catalog, at: Fixtures.now)
        let quote = try Quote(id: QuoteID(7), request: request, submittedAt: Fixtures.now).priced(
            currency: .usd, at: Fixtures.now)
        #expect(quote.status == .ready)
        #expect(quote.price == Money(cents: 6_700))
        #expect(
            quote.customerMessage == "Your quote is ready. The total for the services you have requested is: $67.00")
    }

    @Test("a coupon comes off the automatic price")
    func couponApplied() throws {
        var builder = Fixtures.reza()
        builder.setCoupon("WELCOME10")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        let quote = try Quote(id: QuoteID(8), request: request, submittedAt: Fixtures.now).priced(
            currency: .usd, at: Fixtures.now)
        #expect(quote.pricing?.subtotal == Money(cents: 6_700))
        #expect(quote.pricing?.discount == Money(cents: 670))
        #expect(quote.price == Money(cents: 6_030))
    }

    @Test("John Lee: pending without trim, resolved at $66.25, booked with Joe Murphy, completed with a receipt")
    func johnLee() throws {
        let catalog = Fixtures.catalog
        let now = Fixtures.now
        let request = try Fixtures.johnLee().build(in: catalog, at: now)
        var quote = Quote(id: QuoteID(42), request: request, submittedAt: now)
        #expect(
            quote.customerMessage
                == "Your quote has been submitted and is being processed right now, please wait a few moments")

        quote = try quote.priced(currency: .usd, at: now)
        #expect(quote.status == .pending)
        #expect(quote.pendingReasons.map(\.message) == ["car.trim missing"])
        #expect(
            quote.customerMessage == "Your quote is currently pending, we will get back to you with a ready quote soon")
        #expect(quote.price == nil)

        let unresolved = #expect(throws: QuoteError.self) {
            try quote.resolved(with: Resolution(car: .init(year: 2013)), in: catalog, at: now)
        }
        #expect(unresolved?.code == .unresolved)

        quote = try quote.resolved(
            with: Resolution(car: .init(trim: "LE"), price: Money(parsing: "66.25")), in: catalog, at: now)
        #expect(quote.status == .ready)
        #expect(quote.request.car.trim == "LE")
        #expect(quote.price == Money(cents: 6_625))
        #expect(quote.pricing?.isManual == true)
        #expect(
            quote.customerMessage == "Your quote is ready. The total for the services you have requested is: $66.25")
        #expect(quote.receipt == nil)

        let joe = Fixtures.mechanic("Joe Murphy")
        quote = try quote.booked(with: joe, at: now.addingTimeInterval(60))
        #expect(quote.mechanic == joe)
        #expect(quote.customerMessage == "Your appointment has been booked with Joe Murphy.")

        let done = now.addingTimeInterval(3_600)
        quote = try quote.completed(at: done)
        #expect(quote.customerMessage == "Thank you for using YourMechanic.")
        let receipt = try #require(quote.receipt)
        #expect(receipt.total == Money(cents: 6_625))
        #expect(receipt.mechanic.name == "Joe Murphy")
        #expect(receipt.customer.name == "John Lee")
        #expect(receipt.completedAt == done)
        #expect(receipt.lines.map(\.service) == ["Oil Change", "Brake Inspection"])
    }

    @Test("a service the catalog lacks leaves the quote pending with a machine-readable reason")
    func unlistedServicePends() throws {
        var builder = Fixtures.reza()
        builder.addService("strange noise")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        let quote = try Quote(id: QuoteID(9), request: request, submittedAt: Fixtures.now).priced(
            currency: .usd, at: Fixtures.now)
        #expect(quote.status == .pending)
        #expect(
            quote.pendingReasons == [
                PendingReason(
                    code: "unlisted_service", field: "services[3]", message: "service \"strange noise\" not in catalog")
            ])

        let badFix = #expect(throws: QuoteError.self) {
            try quote.resolved(
                with: Resolution(services: ["Oil Change", "Teleport"]), in: Fixtures.catalog, at: Fixtures.now)
        }
        #expect(badFix?.code == .invalidResolution)
        #expect(badFix?.problems.map(\.field) == ["services[1]"])

        let fixed = try quote.resolved(
            with: Resolution(services: ["Oil Change", "Brake Inspection"]), in: Fixtures.catalog, at: Fixtures.now)
        #expect(fixed.price == Money(cents: 5_000))
    }

    @Test("booking with a mechanic below the services' skill is refused and changes nothing")
    func bookingNeedsSkill() throws {
        let ready = try Self.quote(in: .ready)
        var builder = Fixtures.reza()
        builder.addService("Power Steering Replacement")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        let masterWork = try Quote(id: QuoteID(3), request: request, submittedAt: Fixtures.now).priced(
            currency: .usd, at: Fixtures.now)
        let error = #expect(throws: QuoteError.self) {
            try masterWork.booked(with: Fixtures.mechanic("Nick Main"), at: Fixtures.now)
        }
        #expect(error?.code == .cannotPerform)
        #expect(error?.message == "Nick Main cannot perform Power Steering Replacement")
        #expect(masterWork.status == .ready)
        #expect(try ready.booked(with: Fixtures.mechanic("Mike Fulton"), at: Fixtures.now).status == .booked)
    }

    @Test("a quote survives a JSON round trip unchanged in every state", arguments: QuoteStatus.allCases)
    func codableRoundTrip(status: QuoteStatus) throws {
        let quote = try Self.quote(in: status)
        let decoded = try JSONDecoder().decode(Quote.self, from: JSONEncoder().encode(quote))
        #expect(decoded == quote)
    }
}
