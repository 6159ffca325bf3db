import Foundation
import QuoteCore
import QuoteRules
import Testing

@testable import QuoteWire

/// A client's typed request, encoded as the client library encodes it and decoded as the
/// daemon decodes it, is the action it names.
@Suite("A typed request is the action it names")
struct RequestTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let request: Request
        let action: RequestAction
        var testDescription: String { request.operation.rawValue }
    }

    static let document = CatalogDocument(Catalog.standard)

    static let cases: [Case] = [
        Case(
            request: .submit(
                Submission(
                    customer: .init(name: "Ann Lee", email: "ann@example.com", address: "1 Main St"),
                    car: .init(make: "Honda", model: "Civic", year: 2019, trim: "LX"), services: ["Oil Change"],
                    mechanic: "Ann", coupon: "WELCOME10"),
                idempotencyKey: "k-1", book: true, wait: true),
            action: .write(
                .submit(
                    Submission(
                        customer: .init(name: "Ann Lee", email: "ann@example.com", address: "1 Main St"),
                        car: .init(make: "Honda", model: "Civic", year: 2019, trim: "LX"), services: ["Oil Change"],
                        mechanic: "Ann", coupon: "WELCOME10"),
                    idempotencyKey: "k-1", book: true, wait: true))),
        Case(
            request: .submit(Submission(services: ["Oil Change"])),
            action: .write(.submit(Submission(services: ["Oil Change"]), idempotencyKey: nil, book: false, wait: false))
        ),
        Case(request: .get(quoteId: 7), action: .read(.get(QuoteID(7)))),
        Case(
            request: .list(state: "ready", customer: "ann@example.com", after: 2, limit: 9),
            action: .read(
                .list(status: .ready, customer: CustomerSearch("ann@example.com"), after: QuoteID(2), limit: 9))),
        Case(
            request: .resolve(
                quoteId: 7, Resolution(car: .init(make: "Honda", model: "Jazz", year: 2020, trim: "EX")), price: "66.25"
            ),
            action: .write(
                .resolve(
                    QuoteID(7),
                    Resolution(
                        car: .init(make: "Honda", model: "Jazz", year: 2020, trim: "EX"),
                        price: Money(cents: 6_625, currency: .usd))))),
        Case(
            request: .resolve(
                quoteId: 7, Resolution(services: ["Oil Change"], price: Money(cents: 100, currency: .usd))),
            action: .write(
                .resolve(QuoteID(7), Resolution(services: ["Oil Change"], price: Money(cents: 100, currency: .usd))))),
        Case(
            request: .book(quoteId: 7, mechanic: "Ann", wait: true),
            action: .write(.book(QuoteID(7), mechanic: "Ann", wait: true))),
        Case(request: .book(quoteId: 7), action: .write(.book(QuoteID(7), mechanic: nil, wait: false))),
        Case(request: .complete(quoteId: 7), action: .write(.complete(QuoteID(7)))),
        Case(
            request: .cancel(quoteId: 7, reason: "sold the car"),
            action: .write(.cancel(QuoteID(7), reason: "sold the car"))),
        Case(request: .reassign(quoteId: 7, mechanic: "Bo"), action: .write(.reassign(QuoteID(7), mechanic: "Bo"))),
        Case(request: .waiting(limit: 5), action: .read(.waiting(limit: 5))),
        Case(
            request: .mechanics(freeOnly: true, skill: "master"),
            action: .read(.mechanics(freeOnly: true, skill: .master))),
        Case(request: .services, action: .read(.services)),
        Case(
            request: .setDuty(mechanic: "Ann", onDuty: false),
            action: .write(.setDuty(mechanic: "Ann", onDuty: false))),
        Case(
            request: .addMechanic(name: "Cy", skill: "junior"), action: .write(.addMechanic(name: "Cy", skill: .junior))
        ),
        Case(
            request: .updateMechanic(mechanic: "Cy", skill: "experienced"),
            action: .write(.updateMechanic(mechanic: "Cy", skill: .experienced))),
        Case(request: .retireMechanic(mechanic: "Cy"), action: .write(.retireMechanic(mechanic: "Cy"))),
        Case(request: .catalog, action: .read(.catalog)),
        Case(
            request: .applyCatalog(document),
            action: .write(.applyCatalog((try? document.catalog()) ?? Catalog.standard))),
        Case(request: .events(since: 3, limit: 10), action: .read(.events(since: 3, limit: 10))),
        Case(request: .stats, action: .read(.stats)),
        Case(request: .ping, action: .read(.ping)),
    ]

    @Test("sent and read back, it is its action", arguments: cases)
    func sentAndReadBack(_ sample: Case) throws {
        let id = RequestID.string("r-1")
        let bytes = Array(try JSONEncoder().encode(sample.request.frame(id: id)))
        let frame = try WireCodec().decodeRequest(bytes).get()
        #expect(frame.id == id)
        #expect(frame.op == sample.request.operation.rawValue)
        #expect(try frame.action() == sample.action)
    }

    @Test("every operation of the protocol has its typed request")
    func everyOperation() {
        #expect(Set(Self.cases.map(\.request.operation)) == Set(Operation.allCases))
    }

    @Test("a flag that is not set is left out of the frame, as a client that never heard of it would send it")
    func unsetFlagsAreLeftOut() throws {
        let bytes = try JSONEncoder().encode(Request.book(quoteId: 7).frame())
        let object = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(Set(object.keys) == ["v", "op", "quoteId"])
    }
}
