import QuoteCore
import QuoteRules
import Testing

@testable import QuoteWire

@Suite("Requests are read strictly, as the schema states them")
struct StrictRequestTests {
    /// The refusal of `frame`, decoded and checked as the daemon does; `nil` if accepted.
    static func refusal(_ frame: String) -> (error: WireError, id: RequestID?)? {
        let decoded = WireCodec().decodeRequestKeepingID(Array(frame.utf8))
        switch decoded.result {
        case .failure(let error): return (error, decoded.id)
        case .success(let request):
            do {
                _ = try request.action()
                return nil
            } catch {
                return (error, request.id)
            }
        }
    }

    /// Expects `frame` refused as `invalid_request` with a problem at `field` whose message
    /// contains `message`.
    static func expectRefused(_ frame: String, at field: String, saying message: String) throws {
        let (error, _) = try #require(Self.refusal(frame), "accepted \(frame)")
        #expect(error.code == .invalidRequest)
        let problem = try #require(error.problems?.first { $0.field == field }, "\(error)")
        #expect(problem.message.contains(message), "\(problem)")
    }

    @Test(
        "a key an operation does not have is refused, naming it and the key meant",
        arguments: [
            (#"{"v":1,"op":"get","quoteid":7}"#, "quoteid", "did you mean \"quoteId\"?"),
            (#"{"v":1,"op":"submit","Book":true}"#, "Book", "did you mean \"book\"?"),
            (#"{"v":1,"op":"ping","ID":"a"}"#, "ID", "did you mean \"id\"?"),
            (#"{"v":1,"op":"get","quoteId":7,"price":"1.00"}"#, "price", "is not a field of get"),
            (#"{"v":1,"op":"list","limit":5,"zzz":null}"#, "zzz", "is not a field of list"),
            (#"{"v":1,"op":"submit","customer":{"nmae":"Ann"}}"#, "customer.nmae", "did you mean \"customer.name\"?"),
        ])
    func unknownKeys(frame: String, field: String, message: String) throws {
        try Self.expectRefused(frame, at: field, saying: message)
    }

    @Test(
        "whole numbers count as integers however they are written",
        arguments: [
            (#"{"v":1.0,"op":"get","quoteId":7.0}"#, 7), (#"{"v":1,"op":"get","quoteId":7e0}"#, 7),
            (#"{"v":1,"op":"get","quoteId":0.7e1}"#, 7), (#"{"v":1,"op":"get","quoteId":700e-2}"#, 7),
            (#"{"v":1e0,"op":"get","quoteId":1E2}"#, 100),
            (#"{"v":1,"op":"get","quoteId":9223372036854775807}"#, Int64.max),
        ])
    func wholeNumbers(frame: String, quoteId: Int64) throws {
        let request = try WireCodec().decodeRequest(Array(frame.utf8)).get()
        #expect(request.quoteId == quoteId)
        #expect(try request.action() == .read(.get(QuoteID(quoteId))))
        #expect(try WireCodec().decodeRequestWithFoundation(Array(frame.utf8)).get() == request)
    }

    @Test(
        "numbers outside a field's range are refused, saying the range",
        arguments: [
            (#"{"v":1,"op":"get","quoteId":0}"#, "quoteId", "must be 1 to 9223372036854775807"),
            (#"{"v":1,"op":"get","quoteId":9223372036854775808}"#, "quoteId", "9223372036854775807"),
            (#"{"v":1,"op":"get","quoteId":1e300}"#, "quoteId", "9223372036854775807"),
            (#"{"v":1,"op":"get","quoteId":7.5}"#, "quoteId", "must be an integer"),
            (#"{"v":1,"op":"list","after":-1}"#, "after", "must not be negative"),
            (#"{"v":1,"op":"list","limit":10001}"#, "limit", "must be 1 to 10000"),
            (#"{"v":1,"op":"events","since":-5}"#, "since", "must not be negative"),
            (#"{"v":1,"op":"resolve","quoteId":1,"year":1800}"#, "year", "must be 1886 to 2100"),
            (#"{"v":1,"op":"resolve","quoteId":1,"priceCents":-1}"#, "priceCents", "must be 0 to 100000000000"),
        ])
    func ranges(frame: String, field: String, message: String) throws {
        try Self.expectRefused(frame, at: field, saying: message)
    }

    @Test(
        "enums and amounts are exact",
        arguments: [
            #"{"v":1,"op":"mechanics","skill":"MASTER"}"#, #"{"v":1,"op":"list","state":"Ready"}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":" 1.00"}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"$1.00"}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"-1.00"}"#, #"{"v":1,"op":"resolve","quoteId":1,"price":"1."}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"1000000000.01"}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"1234567890123456"}"#,
            #"{"v":1,"op":"submit","idempotencyKey":""}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"0000000001"}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"price":"80.00","priceCents":-5}"#,
            #"{"v":2,"v":1,"op":"ping"}"#, #"{"v":1,"op":"ping","op":"nope"}"#, #"{"v":1,"op":"ping","id":1,"id":2}"#,
            #"{"v":1,"op":"submit","car":{"make":"m","make":"n"}}"#,
        ])
    func exactValues(frame: String) {
        #expect(Self.refusal(frame)?.error.code == .invalidRequest, "\(frame)")
    }

    @Test(
        "a long run of combining marks in an unknown key costs linear work",
        arguments: [("submit", "x"), ("ping", "x"), ("submit", "customer."), ("resolve", "car."), ("get", "car.")])
    func combiningMarks(op: String, prefix: String) throws {
        let marks = String(repeating: "\u{301}", count: 16_000) + String(repeating: "\u{316}", count: 16_000)
        let frame = #"{"v":1,"op":"\#(op)","\#(prefix)\#(marks)":0,"y\#(marks)":0}"#
        // Quadratic, this took minutes (keys compared after Unicode normalization); linear, it
        // is a moment.
        let refusal = try #require(Self.refusal(frame))
        #expect(refusal.error.problems?.first?.message.contains("did you mean") == false)
    }

    @Test("a resolution with both a price and priceCents is refused, whichever would win")
    func twoPrices() throws {
        for frame in [
            #"{"v":1,"op":"resolve","quoteId":1,"price":"1.00","priceCents":500000}"#,
            #"{"v":1,"op":"resolve","quoteId":1,"priceCents":100,"price":"1.00"}"#,
        ] {
            let refusal = try #require(Self.refusal(frame))
            #expect(refusal.error.code == .invalidRequest)
            #expect(
                refusal.error.problems?.contains(
                    Problem(field: "priceCents", message: "give price or priceCents, not both"))
                    == true)
        }
        // One of them, the other null, is a price.
        let frame = #"{"v":1,"op":"resolve","quoteId":1,"price":null,"priceCents":500}"#
        guard
            case .write(.resolve(_, let resolution)) = try WireCodec().decodeRequest(Array(frame.utf8)).get().action()
        else {
            Issue.record("not a resolve: \(frame)")
            return
        }
        #expect(resolution.price?.cents == 500)
    }

    @Test("a catalog with a text past its bound is refused before any of it is compared")
    func catalogTextBound() throws {
        let marks = String(repeating: "\u{301}", count: 8_000) + String(repeating: "\u{316}", count: 8_000)
        let frame =
            #"{"v":1,"op":"applyCatalog","catalog":{"services":[{"name":"Oil\#(marks)","minimumSkill":"junior\#(marks)","price":"1.00"}],"mechanics":[],"x\#(marks)":1}}"#
        let refusal = try #require(Self.refusal(frame))
        #expect(refusal.error.code == .invalidRequest)
        #expect(refusal.error.problems?.first?.field == "catalog")
        #expect(refusal.error.problems?.first?.message.contains("has a text of 16006 characters") == true)
    }

    @Test("a catalog whose longest name is written all in escapes is read")
    func escapedCatalogName() throws {
        let name = String(repeating: #"\u0416"#, count: QuoteLimits.maximumTextLength)
        let frame =
            #"{"v":1,"op":"applyCatalog","catalog":{"services":[{"name":"\#(name)","minimumSkill":"junior","price":"1.00"}],"mechanics":[{"id":1,"name":"Ann","skill":"junior"}]}}"#
        #expect(Self.refusal(frame) == nil)
    }

    @Test(
        "the longest string of a catalog is measured in characters as written, an escape one",
        arguments: [
            (#"{}"#, 0), (#"{"a":"bcd"}"#, 3), (#"{"a":"b\"cd"}"#, 4), (#"{"ab\\":"c"}"#, 3), (#"{"a":"é"}"#, 1),
            (#"{"a":"\u00e9x"}"#, 2), (#"{"a":"\ud83d\ude00"}"#, 2), (#"{"a":"李小龍"}"#, 3), (#"{"a":"unterminated"#, 12),
        ])
    func longestString(json: String, longest: Int) {
        #expect(CatalogDocument.longestString(in: Array(json.utf8)) == longest)
    }

    @Test("the largest price and the plainest are accepted")
    func prices() throws {
        for (price, cents) in [("1000000000.00", Money.maximumCents), ("0", 0), ("12.5", 1_250), ("007.05", 705)] {
            let frame = #"{"v":1,"op":"resolve","quoteId":1,"price":"\#(price)"}"#
            guard
                case .write(.resolve(_, let resolution)) = try WireCodec().decodeRequest(Array(frame.utf8)).get()
                    .action()
            else {
                Issue.record("not a resolve: \(frame)")
                continue
            }
            #expect(resolution.price?.cents == cents)
        }
    }

    @Test(
        "a refusal carries the id of any JSON object whose id is a string or an integer",
        arguments: [
            (#"{"v":1,"op":"get","id":"a","quoteId":null,"x":1}"#, RequestID.string("a")),
            (#"{"v":1,"op":"get","id":3.0,"quoteId":"7"}"#, .number(3)),
            (#"{"v":2,"id":-4}"#, .number(-4)),
            (#"{"id":18446744073709551616,"v":1,"op":"ping"}"#, .outOfRange("18446744073709551616")),
            (#"{"id":1e30,"v":1,"op":"ping"}"#, .outOfRange("1" + String(repeating: "0", count: 30))),
            (#"{"id":-12.5e20,"v":1,"op":"ping"}"#, .outOfRange("-125" + String(repeating: "0", count: 19))),
        ])
    func idsEchoed(frame: String, id: RequestID) throws {
        let (_, echoed) = try #require(Self.refusal(frame), "accepted \(frame)")
        #expect(echoed == id)
        let reply = WireReply.failure(echoed, WireError(code: .invalidRequest, message: "x"))
        let bytes = String(decoding: WireCodec().encode(reply), as: UTF8.self)
        if case .outOfRange(let digits) = id { #expect(bytes.contains(#""id":\#(digits)"#), "\(bytes)") }
    }
}

extension StrictRequestTests {
    static let catalog =
        #"{"services":[{"name":"Oil Change","minimumSkill":"junior","price":"35.00"}],"mechanics":[{"id":1,"name":"Steve Brimington","skill":"junior"}]}"#

    @Test("applyCatalog reads its catalog whole, as a catalog file holds it")
    func catalogRead() throws {
        let request = try WireCodec().decodeRequest(
            Array(#"{"v":1,"op":"applyCatalog","catalog":\#(Self.catalog)}"#.utf8)
        ).get()
        guard case .write(.applyCatalog(let catalog)) = try request.action() else {
            Issue.record("not an applyCatalog")
            return
        }
        #expect(catalog.services.map(\.name) == ["Oil Change"] && catalog.mechanics.map(\.id) == [MechanicID(1)])
    }

    @Test(
        "a catalog's shape is refused as invalid_request, naming where",
        arguments: [
            (#"{"v":1,"op":"applyCatalog","catalog":{"services":[],"mechanics":[],"colour":1}}"#, "catalog.colour"),
            (
                #"{"v":1,"op":"applyCatalog","catalog":{"services":[{"name":"a","minimumSkill":"junior","price":"1.00","tax":1}],"mechanics":[]}}"#,
                "catalog.services[0].tax"
            ),
            (#"{"v":1,"op":"applyCatalog","catalog":{"services":"all"}}"#, "catalog"),
            (#"{"v":1,"op":"applyCatalog","catalog":7}"#, "catalog"),
            (#"{"v":1,"op":"applyCatalog"}"#, "catalog"),
            (#"{"v":1,"op":"addMechanic","name":"  ","skill":"junior"}"#, "name"),
            (#"{"v":1,"op":"addMechanic","name":"Nia","skill":"Master"}"#, "skill"),
            (#"{"v":1,"op":"updateMechanic","mechanic":"Nia"}"#, "skill"),
            (#"{"v":1,"op":"retireMechanic"}"#, "mechanic"),
        ])
    func catalogShape(frame: String, field: String) throws {
        let (error, _) = try #require(Self.refusal(frame), "accepted \(frame)")
        #expect(error.code == .invalidRequest, "\(error)")
        #expect(error.problems?.contains { $0.field == field } == true, "\(error)")
    }

    @Test("a catalog of the right shape with problems no schema can state is invalid_catalog, every problem listed")
    func catalogProblems() throws {
        let frame =
            #"{"v":1,"op":"applyCatalog","catalog":{"currency":"EUR","services":[{"name":"Oil","minimumSkill":"junior","price":"1.00"},{"name":"OIL","minimumSkill":"junior","price":"2.00"}],"mechanics":[{"id":1,"name":"Ann","skill":"junior"},{"id":1,"name":"Bo","skill":"wizard"}]}}"#
        let (error, _) = try #require(Self.refusal(frame))
        #expect(error.code == .invalidCatalog)
        #expect(
            Set(error.problems?.map(\.field) ?? [])
                == ["catalog.services[1].name", "catalog.mechanics[1].skill"], "\(error)")
    }
}

extension StrictRequestTests {
    @Test("every operation is found by its name, and nothing else is")
    func operationNames() {
        for operation in Operation.allCases { #expect(Operation(rawValue: operation.rawValue) == operation) }
        for name in ["", "Submit", "submit ", "catalogs", "apply"] { #expect(Operation(rawValue: name) == nil) }
    }
}
