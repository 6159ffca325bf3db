import Foundation
import QuoteCore
import QuoteRules
import QuoteStore
import Testing

@testable import QuoteWire

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
        quote = try quote.resolved(
            with: Resolution(car: .init(trim: "LE"), price: Money(cents: 6_625)), in: .standard, at: now)
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

    @Test("a large reply, with extreme numbers, reads back whole")
    func largeReply() throws {
        let codec = WireCodec()
        let quote = WireQuote(try Self.quote(completed: true))
        var reply = WireReply.success(.number(Int64.min))
        reply.quotes = Array(repeating: quote, count: 300)
        reply.next = Int64.max
        reply.lastSeq = 0
        let bytes = codec.encode(reply)
        #expect(bytes.count > 200_000)
        #expect(try codec.decode(WireReply.self, from: bytes) == reply)
    }

    /// A quote in each state, with a coupon, an unlisted service, a preferred mechanic and text
    /// that needs escaping.
    static func quotesInEveryState() throws -> [Quote] {
        let ready = try quote(completed: false)
        var pendingBuilder = QuoteBuilder()
        pendingBuilder.setCustomer(name: "Ann\tB", email: "ann@example.com", address: "2 Rue \"Neuve\"")
        pendingBuilder.setCar(make: "Peugeot", model: "208", year: 2019)
        pendingBuilder.addService("Brake Pad Replacement")
        let pending = try Quote(
            id: QuoteID(7), request: try pendingBuilder.build(in: .standard, at: now), submittedAt: now
        ).priced(currency: .usd, at: now)
        let resolved = try pending.resolved(with: Resolution(car: .init(trim: "GT")), in: .standard, at: now)
        let booked = try resolved.booked(with: Catalog.standard.mechanic(named: "Joe Murphy")!, at: now)
        let completed = try quote(completed: true)
        return [
            Quote(id: ready.id, request: ready.request, submittedAt: now), ready, pending, resolved, booked, completed,
            Quote(id: QuoteID(8), request: ready.request, submittedAt: now, submittedBy: "support-1"),
            // Times Foundation's format style writes a millisecond early.
            Quote(id: QuoteID(9), request: ready.request, submittedAt: Date(timeIntervalSince1970: 1_790_000_000.554)),
            Quote(id: QuoteID(10), request: ready.request, submittedAt: Date(timeIntervalSince1970: 1_790_000_000.113)),
            try ready.cancelled(reason: "changed my mind", at: now), try pending.cancelled(reason: nil, at: now),
            try booked.cancelled(reason: nil, at: now.addingTimeInterval(0.25)),
            try resolved.waiting(for: nil, at: now.addingTimeInterval(0.5)),
            try resolved.waiting(for: Catalog.standard.mechanic(named: "Joe Murphy")!, at: now),
            try resolved.waiting(for: nil, at: now).cancelled(reason: nil, at: now),
            // A notice in the message, with what JSON escapes.
            Quote(
                id: QuoteID(11), request: ready.request, stage: ready.stage, submittedAt: now, updatedAt: now,
                notice: "\"Junior\" 1 is off duty.\t"),
        ]
    }

    @Test("a quote written straight from the domain reads back as its wire value")
    func quoteStraightFromDomain() throws {
        let codec = WireCodec()
        let quotes = try Self.quotesInEveryState()
        #expect(Set(quotes.map(\.status)) == Set(QuoteStatus.allCases))
        for quote in quotes {
            let direct = codec.encodeQuote(quote, currency: .usd)
            // The same JSON, key for key at every level, as `WireQuote`'s `Codable`
            // conformance writes, and it reads back as the wire value (its times to the
            // millisecond, as every frame writes them).
            let wire = WireQuote(quote, currency: .usd)
            let asWire = try codec.decode(WireQuote.self, from: codec.encode(wire))
            #expect(try codec.decode(WireQuote.self, from: Array(direct.json)) == asWire)
            if quote.submittedAt == Self.now { #expect(asWire == wire) }
            let written = try JSONSerialization.jsonObject(with: Data(direct.json)) as? NSDictionary
            let expected =
                try JSONSerialization.jsonObject(
                    with: Data(codec.encode(WireQuote(quote, currency: .usd)))) as? NSDictionary
            #expect(written != nil && written == expected, "\(quote.status)")
            // Its request part copied from any other quote with the same request: same bytes.
            for sibling in quotes where sibling.request == quote.request {
                let shared = codec.encodeQuote(
                    quote, currency: .usd, sharingRequestWith: codec.encodeQuote(sibling, currency: .usd))
                #expect(shared.json == direct.json, "\(quote.status) from \(sibling.status)")
            }
            // Written in place in a reply: the reply it spliced into, and the same JSON, part of
            // the reply's bytes.
            let reply = WireReply.success(.string("r-1"))
            let (inReply, inPlace) = codec.encode(reply, writing: quote, currency: .usd)
            #expect(inReply == codec.encode(reply, quote: direct), "\(quote.status)")
            #expect(inPlace.json == direct.json, "\(quote.status)")
            let event = WireEvent(seq: 1, type: "quote.\(quote.status)", at: Self.now, quoteId: quote.id.rawValue)
            var whole = event
            whole.quote = asWire
            #expect(try codec.decode(WireEvent.self, from: codec.encode(event, quote: direct)) == whole)
        }
    }

    @Test("a write's reply written without a WireReply is byte for byte the reply with the same members")
    func writeReplyWithoutWireReply() throws {
        let codec = WireCodec()
        let joe = try #require(Catalog.standard.mechanic(named: "Joe Murphy"))
        let refusal = WireError(code: WireError.Code(rawValue: "no_mechanic_available"), message: "no mechanic is free")
        let memberSets: [WriteMembers] = [
            WriteMembers(),
            WriteMembers(replayed: true, catalogVersion: 3),
            WriteMembers(bookingError: refusal, waitPosition: 2),
            WriteMembers(mechanic: WireQuote.WireMechanic(joe), onDuty: false),
            WriteMembers(
                replayed: true, bookingError: refusal, waitPosition: 1, mechanic: WireQuote.WireMechanic(joe),
                onDuty: true, catalogVersion: 9),
        ]
        for quote in try Self.quotesInEveryState() {
            for (index, members) in memberSets.enumerated() {
                for id in [RequestID.string("r-1"), .number(42), nil] {
                    let reply = members.reply(to: id)
                    // Every member where a reply has it, none lost on the way.
                    #expect(reply.ok && reply.id == id && reply.error == nil && reply.replayed == members.replayed)
                    #expect(reply.bookingError == members.bookingError && reply.waitPosition == members.waitPosition)
                    #expect(reply.mechanic == members.mechanic && reply.onDuty == members.onDuty)
                    #expect(reply.catalogVersion == members.catalogVersion)
                    let (expected, expectedQuote) = codec.encode(reply, writing: quote, currency: .usd)
                    let (written, writtenQuote) = codec.encodeWrite(id: id, members, writing: quote, currency: .usd)
                    #expect(written == expected, "\(quote.status), members \(index)")
                    #expect(writtenQuote.json == expectedQuote.json, "\(quote.status), members \(index)")
                    // And it reads back as that reply, its quote included.
                    var whole = reply
                    whole.quote = try codec.decode(WireQuote.self, from: Array(expectedQuote.json))
                    #expect(try codec.decode(WireReply.self, from: written) == whole)
                }
            }
        }
    }

    @Test("every kind of event, written straight from the log, is the JSON of its wire value")
    func loggedEventsOfEveryKind() throws {
        let codec = WireCodec()
        let joe = try #require(Catalog.standard.mechanic(named: "Joe Murphy"))
        let steve = try #require(Catalog.standard.mechanics.first { $0.id != joe.id })
        let booked = try #require(try Self.quotesInEveryState().first { $0.status == .booked })
        let kinds: [StoredEvent.Kind] = [
            .quote(from: nil, quote: try Self.quote(completed: false)),
            .quote(from: .booked, quote: try Self.quote(completed: true)),
            .quoteReassigned(from: steve, quote: booked),
            .mechanicBusy(joe, quote: booked.id), .mechanicFree(joe, quote: booked.id),
            .mechanicDuty(joe, onDuty: true), .mechanicDuty(joe, onDuty: false),
            .roster(joe, change: .added), .roster(joe, change: .updated(from: .junior)), .roster(joe, change: .retired),
            .catalogApplied(version: 7),
        ]
        let events = kinds.enumerated().flatMap { index, kind in
            [nil, "support-1"].map { StoredEvent(seq: Int64(index) + 1, at: Self.now, kind: kind, by: $0) }
        }
        let logged = ReplyEncoder(maxReplyBytes: 1 << 20).encodeLogged(events, currency: .usd)
        #expect(logged.count == events.count)
        // What each kind carries, said here apart from the code that writes it.
        let carried = try logged.map { try codec.decode(WireEvent.self, from: $0.body) }
        let reassigned = carried[4]
        #expect(reassigned.type == "quote.reassigned" && reassigned.from == steve.name && reassigned.to == joe.name)
        #expect(reassigned.mechanic?.name == joe.name && reassigned.quoteId == booked.id.rawValue)
        #expect(
            carried[6].type == "mechanic.busy" && carried[6].quoteId == booked.id.rawValue && carried[6].from == nil)
        let updated = carried[16]
        #expect(updated.type == "mechanic.updated" && updated.from == "junior" && updated.to == joe.skill.name)
        #expect(carried[20].type == "catalog.applied" && carried[20].catalogVersion == 7 && carried[20].mechanic == nil)
        #expect(carried[0].from == nil && carried[2].from == "booked" && carried[3].by == "support-1")
        for (event, published) in zip(events, logged) {
            let expected = WireEvent(event, currency: .usd)
            #expect(published.seq == event.seq)
            #expect(published.topic == Array(event.type.utf8))
            let body = published.body
            #expect(try codec.decode(WireEvent.self, from: body) == expected, "\(event.type)")
            let written = try JSONSerialization.jsonObject(with: Data(body)) as? NSDictionary
            let asWire = try JSONSerialization.jsonObject(with: Data(codec.encode(expected))) as? NSDictionary
            #expect(written != nil && written == asWire, "\(event.type)")
        }
    }

    /// Bytes that must be escaped, and neighbours that must not be, at every position of
    /// strings long and short enough to cross the writer's word-at-a-time scan.
    @Test(
        "every character that needs escaping is escaped wherever it falls in a string",
        arguments: ["\u{0}", "\u{1}", "\u{1F}", "\n", "\"", "\\", " ", "!", "#", "[", "]", "~", "\u{7F}", "é", "☀︎"])
    func escaping(special: String) throws {
        let codec = WireCodec()
        for length in 1...20 {
            for position in 0..<length {
                let message =
                    String(repeating: "a", count: position) + special
                    + String(repeating: "b", count: length - position - 1)
                let bytes = codec.encode(
                    WireReply.failure(.number(1), WireError(code: .invalidRequest, message: message)))
                let decoded = try codec.decode(WireReply.self, from: bytes)
                #expect(decoded.error?.message == message, "length \(length), position \(position)")
                #expect(try JSONSerialization.jsonObject(with: Data(bytes)) is [String: Any])
            }
        }
    }

    @Test("a quote encoded once splices into a reply and an event byte for byte", arguments: [false, true])
    func splicedQuote(completed: Bool) throws {
        let codec = WireCodec()
        let quote = WireQuote(try Self.quote(completed: completed))
        let encoded = codec.encodeQuote(quote)

        var reply = WireReply.success(.number(9))
        reply.bookingError = WireError(code: .init(rawValue: "no_mechanic_available"), message: "none")
        var whole = reply
        whole.quote = quote
        #expect(codec.encode(reply, quote: encoded) == codec.encode(whole))

        let event = WireEvent(seq: 3, type: "quote.ready", at: Self.now, quoteId: 42, from: "submitted", to: "ready")
        var wholeEvent = event
        wholeEvent.quote = quote
        #expect(codec.encode(event, quote: encoded) == codec.encode(wholeEvent))
        #expect(try codec.decode(WireEvent.self, from: codec.encode(event, quote: encoded)) == wholeEvent)
    }

    @Test(
        "times are written in RFC 3339 to the millisecond, truncated",
        arguments: [
            0, 0.001, 0.999, 946_684_799.999, 951_782_400, 4_107_542_400, 1_790_000_000.5, 1_790_000_000.0004,
            1_790_000_000.9996, -0.001, -86_400, -2_208_988_800.5, 253_402_300_799.5,
        ])
    func times(seconds: Double) throws {
        try expectTime(Date(timeIntervalSince1970: seconds))
    }

    @Test("random times are written in RFC 3339 to the millisecond, truncated")
    func randomTimes() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let milliseconds = Double(Int64.random(in: -5_000_000_000_000...5_000_000_000_000, using: &generator))
            try expectTime(Date(timeIntervalSince1970: milliseconds / 1_000))
            try expectTime(Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &generator)))
        }
    }

    /// The written time reads back, with Foundation's RFC 3339 parser, as the same
    /// millisecond. (Foundation's own formatter is sometimes a millisecond early: it truncates
    /// `x.554` held as `x.55399999`.)
    @Test("a codec writing the same time again writes the same bytes as a fresh one, in any position")
    func repeatedTimes() throws {
        let codec = WireCodec()
        let times = [Self.now, Self.now, Self.now.addingTimeInterval(0.001), Self.now, Date(timeIntervalSince1970: 0)]
        for (index, time) in times.enumerated() {
            var reply = WireReply.success(.number(Int64(index)))
            reply.history = [
                .init(from: nil, to: "submitted", at: time, seq: 1),
                .init(from: "submitted", to: "ready", at: time, seq: 2),
            ]
            let event = WireEvent(seq: 1, type: "quote.ready", at: time, quoteId: 1, to: "ready")
            #expect(codec.encode(reply) == WireCodec().encode(reply))
            #expect(codec.encode(event) == WireCodec().encode(event))
            #expect(try codec.decode(WireReply.self, from: codec.encode(reply)) == reply)
        }
    }

    func expectTime(_ date: Date) throws {
        let event = WireEvent(seq: 1, type: "quote.ready", at: date, quoteId: 1, from: nil, to: "ready", quote: nil)
        let object = try JSONSerialization.jsonObject(with: Data(WireCodec().encode(event))) as? [String: Any]
        let text = try #require(object?["at"] as? String)
        #expect(text.count == 24 && text.hasSuffix("Z"), "\(text)")
        let parsed = try Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        #expect(
            (parsed.timeIntervalSince1970 * 1_000).rounded() == (date.timeIntervalSince1970 * 1_000).rounded(.down),
            "\(date.timeIntervalSince1970) written as \(text)")
    }

    @Test(
        "text is escaped as JSON requires",
        arguments: ["plain", "quote \" and \\", "tab\tnew\nline\r\u{1}\u{1f}", "☀︎ 李"])
    func escaping(text: String) throws {
        var reply = WireReply.success(.string(text))
        reply.pong = true
        let bytes = WireCodec().encode(reply)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(object["id"] as? String == text)
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

    @Test(
        "list takes a customer as text, an email address or a name's start; submit as an object, never the other way",
        arguments: [
            (#"{"v":1,"op":"list","customer":"Jane@Example.com"}"#, CustomerSearch.email("jane@example.com"), nil),
            (#"{"v":1,"op":"list","customer":"Jane D"}"#, .namePrefix("jane d"), nil),
            (#"{"v":1,"op":"list","customer":""}"#, nil, "must not be blank"),
            (#"{"v":1,"op":"list","customer":" \u200b"}"#, nil, "must not be blank"),
            (#"{"v":1,"op":"list","customer":{"name":"Jane"}}"#, nil, "must be a string"),
            (
                #"{"v":1,"op":"submit","customer":"Jane","car":{"make":"Honda","model":"Civic"},"services":["Oil Change"]}"#,
                nil, "must be an object"
            ),
        ] as [(String, CustomerSearch?, String?)])
    func customerSearch(frame: String, search: CustomerSearch?, problem: String?) throws {
        let request = try WireCodec().decodeRequest(Array(frame.utf8)).get()
        if let search {
            #expect(try request.action() == .read(.list(status: nil, customer: search, after: nil, limit: 100)))
        } else {
            let error = #expect(throws: WireError.self) { try request.action() }
            let customer = error?.problems?.first { $0.field == "customer" }
            #expect(customer?.message.contains(problem ?? "-") == true, "\(error?.problems ?? [])")
        }
    }
}

/// The hand-written request parser against the `JSONDecoder` path it replaced: the same
/// request from every valid frame; never a request from a frame `JSONDecoder` refused.
///
/// Where they differ the parser is the stricter, by design (RFC 8259): `JSONDecoder` accepts
/// trailing commas, and reads malformed numbers (`042`, `--2`) as values "of the wrong type".
@Suite("The request parser")
struct RequestParserTests {
    static let valid: [String] = [
        #"{"v":1,"op":"ping"}"#,
        #"{"v":1,"op":"list","customer":"Jane D","state":"ready"}"#,
        #"{"v":1,"op":"ping","id":" !~printable ASCII, every byte from space to tilde ~! 0123456789"}"#,
        #"  {"op" : "ping" , "v" : 1 , "id" : "c-1" }  "#,
        #"{"v":1,"op":"get","quoteId":7,"id":-42}"#,
        #"{"v":1,"op":"submit","customer":{"name":"John \"JL\" Lee","email":"john.lee@example.com","address":"1 Infinite Loop, Cupertino \u2600\ufe0e"},"car":{"make":"Toyota","model":"Corolla","year":2012,"trim":null},"services":["Oil Change","strange noise"],"mechanic":"Joe Murphy","coupon":"WELCOME10","idempotencyKey":"k-1","book":true}"#,
        #"{"v":1,"op":"submit","customer":{"name":"José Müller 李小龍 \ud83d\ude97","email":"j@m.de","address":"\/\\ \u00e9"},"services":[]}"#,
        #"{"v":1,"op":"resolve","quoteId":9223372036854775807,"price":"66.25","trim":"LE","make":"Toyota","model":"Corolla","year":2012,"priceCents":-9223372036854775808,"services":["Oil Change"]}"#,
        #"{"v":1,"op":"list","state":"ready","after":0,"limit":100,"unknown":{"deep":[1,2.5e-3,{"x":[true,false,null]}],"s":"\u0000"}}"#,
        #"{"v":1,"op":"mechanics","free":true,"skill":"master","customer":null,"car":null,"services":null}"#,
        #"{"v":1,"op":"cancel","quoteId":3,"reason":"customer called"}"#,
        #"{"v":1,"op":"events","since":0,"limit":1000}"#,
        #"{"v":1,"op":"applyCatalog","catalog":{"services":[{"name":"Oil Change","minimumSkill":"junior","price":"35.00"}],"mechanics":[{"id":1,"name":"Steve Brimington","skill":"junior"}]}}"#,
        #"{"v":1,"op":"applyCatalog","catalog":{"services":7,"colour":"red"}}"#,
        #"{}"#,
        "{\"v\":1,\"op\":\"ping\",\"id\":\"caf\u{e9}\"}",
        // Keys with escapes and beyond ASCII: known ones still match, unknown ones are skipped.
        #"{"\u0076":1,"o\u0070":"get","quoteId\u0000":5,"qu\u006fteId":6,"caf\u00e9":1,"n\/a":2}"#,
        "{\"v\":1,\"op\":\"ping\",\"caf\u{e9}\":{\"op\":\"x\"},\"\u{2600}\":[]}",
    ]

    /// Broken frames and the code each gets.
    static let broken: [(String, WireError.Code)] = [
        ("", .invalidJSON), (" ", .invalidJSON), ("nope", .invalidJSON), ("{", .invalidJSON), ("}", .invalidJSON),
        ("{\"v\":1", .invalidJSON), ("{\"v\" 1}", .invalidJSON), ("{v:1}", .invalidJSON), ("{'v':1}", .invalidJSON),
        ("{\"v\":1}{}", .invalidJSON), ("{\"v\":1} x", .invalidJSON), ("{\"v\":01}", .invalidJSON),
        ("{\"v\":-}", .invalidJSON), ("{\"v\":1.}", .invalidJSON), ("{\"v\":.5}", .invalidJSON),
        ("{\"v\":+1}", .invalidJSON), ("{\"v\":tru}", .invalidJSON), ("{\"v\":nul}", .invalidJSON),
        ("{\"op\":\"a\u{1}b\"}", .invalidJSON), ("{\"op\":\"\\x\"}", .invalidJSON),
        ("{\"op\":\"\\u12G4\"}", .invalidJSON), ("{\"op\":\"\\ud83d\"}", .invalidJSON),
        ("{\"a\":[,1]}", .invalidJSON), ("{\"a\":{\"b\":}}", .invalidJSON),
        ("{\"o\u{1}p\":1}", .invalidJSON), ("{\"\\x\":1}", .invalidJSON), ("{\"op", .invalidJSON),
        ("{\"op\":1,\"v", .invalidJSON),
        (String(repeating: "[", count: 2_000), .invalidJSON),
        ("{\"a\":" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}", .invalidJSON),
        // JSONDecoder lets these pass; they are not JSON.
        ("{\"v\":1,}", .invalidJSON), ("{\"v\":1,\"op\":\"ping\",}", .invalidJSON), ("{\"a\":[1,]}", .invalidJSON),
        // Valid JSON, wrong shape.
        ("[1,2]", .invalidRequest), ("\"text\"", .invalidRequest), ("42", .invalidRequest), ("null", .invalidRequest),
        ("{\"v\":\"1\"}", .invalidRequest), ("{\"v\":1.5}", .invalidRequest), ("{\"v\":true}", .invalidRequest),
        ("{\"quoteId\":\"7\"}", .invalidRequest), ("{\"quoteId\":99999999999999999999}", .invalidRequest),
        ("{\"services\":\"Oil Change\"}", .invalidRequest), ("{\"services\":[\"a\",null]}", .invalidRequest),
        ("{\"services\":[\"a\",1]}", .invalidRequest), ("{\"customer\":7}", .invalidRequest),
        ("{\"customer\":{\"name\":1}}", .invalidRequest), ("{\"car\":{\"year\":\"2012\"}}", .invalidRequest),
        ("{\"book\":\"yes\"}", .invalidRequest), ("{\"id\":true}", .invalidRequest), ("{\"id\":{}}", .invalidRequest),
        ("{\"id\":1.5}", .invalidRequest), ("{\"catalog\":[1]}", .invalidRequest),
        // A key given twice: readers disagree on which copy counts, so quoted takes neither.
        ("{\"v\":1,\"op\":\"ping\",\"v\":2}", .invalidRequest),
        ("{\"customer\":{\"name\":\"a\",\"name\":\"b\"}}", .invalidRequest),
        // Text quoted refuses: control characters, escaped or raw DEL, C1 and bidi overrides, too long, too many.
        ("{\"customer\":{\"name\":\"a\\nb\"}}", .invalidRequest), ("{\"reason\":\"\\u001b[2J\"}", .invalidRequest),
        ("{\"mechanic\":\"x\u{7F}\"}", .invalidRequest), ("{\"coupon\":\"\u{85}\"}", .invalidRequest),
        ("{\"car\":{\"make\":\"\u{202E}abc\"}}", .invalidRequest),
        ("{\"idempotencyKey\":\"a\\u0000b\"}", .invalidRequest),
        ("{\"idempotencyKey\":\"\"}", .invalidRequest),
        ("{\"mechanic\":\"abcdefghij\u{7F}klmnopqrs\"}", .invalidRequest),
        ("{\"reason\":\"abcdefgh\\u001fijklmnop\"}", .invalidRequest),
        ("{\"coupon\":\"0123456789abcdef\u{9F}\"}", .invalidRequest),
        ("{\"idempotencyKey\":\"" + String(repeating: "k", count: 256) + "\"}", .invalidRequest),
        ("{\"id\":\"" + String(repeating: "i", count: 257) + "\"}", .invalidRequest),
        ("{\"services\":[" + Array(repeating: "\"s\"", count: 33).joined(separator: ",") + "]}", .invalidRequest),
    ]

    /// `JSONDecoder`'s verdict on `frame`, and ours, checked against each other: the parser
    /// never accepts a frame `JSONDecoder` refuses, reads the same request when both accept,
    /// and refuses what `JSONDecoder` accepts only for a trailing comma or a repeated key.
    func expectSafeAgainstFoundation(_ frame: [UInt8], _ label: String) {
        let codec = WireCodec()
        switch (codec.decodeRequest(frame), codec.decodeRequestWithFoundation(frame)) {
        case (.success(let mine), .success(let theirs)):
            #expect(mine.comparable == theirs, "\(label)")
        case (.failure, .failure):
            break
        case (.success(let mine), .failure(let theirs)):
            Issue.record("\(label): parsed to \(mine), which JSONDecoder refused: \(theirs.message)")
        case (.failure(let mine), .success):
            let compact = frame.filter { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
            let trailingComma = zip(compact, compact.dropFirst()).contains { $0 == 0x2C && ($1 == 0x7D || $1 == 0x5D) }
            // Stricter than `JSONDecoder` on purpose only there: a trailing comma, and a key
            // given twice (which `JSONDecoder` resolves silently).
            let repeated = mine.code == .invalidRequest && mine.message.hasSuffix("is given more than once")
            #expect((trailingComma && mine.code == .invalidJSON) || repeated, "\(label): refused (\(mine.message))")
        }
    }

    @Test("a valid frame reads to the same request as through JSONDecoder", arguments: valid)
    func validFrames(frame: String) throws {
        let codec = WireCodec()
        let mine = try codec.decodeRequest(Array(frame.utf8)).get()
        #expect(mine.comparable == (try codec.decodeRequestWithFoundation(Array(frame.utf8)).get()))
    }

    @Test("a broken frame is refused with its code", arguments: broken)
    func brokenFrames(frame: String, code: WireError.Code) {
        guard case .failure(let error) = WireCodec().decodeRequest(Array(frame.utf8)) else {
            Issue.record("accepted \(frame.prefix(80))")
            return
        }
        #expect(error.code == code)
        if code == .invalidRequest, frame.hasPrefix("{") {
            #expect(error.problems?.count == 1, "the wrong field is named")
        }
        expectSafeAgainstFoundation(Array(frame.utf8), String(frame.prefix(80)))
    }

    @Test("bytes that are not UTF-8 are not JSON")
    func invalidUTF8() {
        for bytes: [UInt8] in [
            Array(#"{"op":""#.utf8) + [0xFF] + Array(#""}"#.utf8),
            Array(#"{"op":""#.utf8) + [0xC3] + Array(#""}"#.utf8),
            Array(#"{"op":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
        ] {
            guard case .failure(let error) = WireCodec().decodeRequest(bytes) else {
                Issue.record("accepted \(bytes)")
                continue
            }
            #expect(error.code == .invalidJSON)
            expectSafeAgainstFoundation(bytes, "\(bytes)")
        }
    }

    @Test(
        "a special byte at any offset of a string or a key, across the words the parser scans at once, reads as JSONDecoder reads it"
    )
    func specialBytesAtEveryOffset() throws {
        // Quote, backslash and beyond-ASCII text, written as JSON allows; then raw bytes that are
        // refused (a control character, a byte that is not UTF-8) or checked later (DEL).
        let accepted: [(json: [UInt8], text: String)] = [
            (Array(#"\""#.utf8), "\""), (Array(#"\\"#.utf8), "\\"), (Array("é".utf8), "é"),
            (Array(#"\u00e9"#.utf8), "é"),
        ]
        let raw: [[UInt8]] = [[0x01], [0x1F], [0x7F], [0xFF], [0xC3]]
        let codec = WireCodec()
        for offset in 0..<20 {
            let before = Array(repeating: UInt8(ascii: "a"), count: offset)
            let after = Array(repeating: UInt8(ascii: "b"), count: 19 - offset)
            for (json, text) in accepted {
                let id = before + json + after
                let frame = Array(#"{"v":1,"op":"ping","id":""#.utf8) + id + Array(#""}"#.utf8)
                let request = try codec.decodeRequest(frame).get()
                let expected = String(repeating: "a", count: offset) + text + String(repeating: "b", count: 19 - offset)
                #expect(request.id == .string(expected), "id with \(text) at \(offset)")
                let keyed = Array(#"{"v":1,"op":"ping",""#.utf8) + id + Array(#"":1}"#.utf8)
                #expect((try? codec.decodeRequest(keyed).get()) != nil, "unknown key with \(text) at \(offset)")
                expectSafeAgainstFoundation(frame, "id with \(text) at \(offset)")
                expectSafeAgainstFoundation(keyed, "key with \(text) at \(offset)")
            }
            for bytes in raw {
                let text = before + bytes + after
                let frame = Array(#"{"v":1,"op":"ping","id":""#.utf8) + text + Array(#""}"#.utf8)
                let keyed = Array(#"{"v":1,"op":"ping",""#.utf8) + text + Array(#"":1}"#.utf8)
                if bytes != [0x7F] {
                    #expect((try? codec.decodeRequest(frame).get()) == nil, "id with \(bytes) at \(offset)")
                    #expect((try? codec.decodeRequest(keyed).get()) == nil, "key with \(bytes) at \(offset)")
                }
                expectSafeAgainstFoundation(frame, "id with \(bytes) at \(offset)")
                expectSafeAgainstFoundation(keyed, "key with \(bytes) at \(offset)")
            }
        }
    }

    @Test("no one-byte corruption or truncation of a valid frame reads to what JSONDecoder would not")
    func corruptedFrames() {
        // Deterministic: each position of each frame, replaced by each of a few telling bytes.
        let replacements: [UInt8] = [
            0x00, 0x20, 0x22, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x5C, 0x30, 0x2D, 0x6E, 0xC3,
        ]
        for frame in Self.valid.prefix(6) {
            let bytes = Array(frame.utf8)
            for position in bytes.indices {
                for replacement in replacements where bytes[position] != replacement {
                    var corrupted = bytes
                    corrupted[position] = replacement
                    expectSafeAgainstFoundation(corrupted, String(decoding: corrupted, as: UTF8.self))
                }
                expectSafeAgainstFoundation(Array(bytes[..<position]), "truncated at \(position)")
            }
        }
    }
}
