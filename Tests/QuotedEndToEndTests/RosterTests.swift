import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("quoted end to end: duty and reassignment", .serialized, .timeLimit(.minutes(3)))
struct RosterTests {
    @Test(
        "Steve goes off duty and his quote moves to the next free junior; the line is served in order; back on duty he is booked next; every event in order, numbered without a gap, with who did it"
    )
    func steveOffDutyAndBack() throws {
        let secure = try SecureDaemon(
            clients: [("desk", "client"), ("sam", "support"), ("ops", "operator")],
            arguments: [
                // Three juniors, in dispatch order Steve, Mike, Ali.
                "--catalog", try catalogFile(mechanics: ["Steve Brimington", "Mike Fulton", "Ali Bellevue"]),
            ])
        let context = try Context()
        let desk = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("desk"))
        let sam = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("sam"))
        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        func submit(_ name: String, wait: Bool = false) throws -> [String: Any] {
            var request = Requests.submit(name: name, book: true)
            if wait { request["wait"] = true }
            return try desk.call(request)
        }
        func mechanic(_ reply: [String: Any]) -> String? { reply.quote?[object: "mechanic"]?["name"] as? String }

        let first = try submit("First Customer")
        #expect(mechanic(first) == "Steve Brimington")
        let second = try submit("Second Customer")
        #expect(mechanic(second) == "Mike Fulton")

        let off = try sam.call(Requests.op("setDuty", ["mechanic": "Steve Brimington", "onDuty": false]))
        #expect(off["onDuty"] as? Bool == false && off[object: "mechanic"]?["name"] as? String == "Steve Brimington")
        let moved = try sam.call(Requests.op("reassign", ["quoteId": first.quoteID]))
        #expect(moved.quote?["state"] as? String == "booked" && mechanic(moved) == "Ali Bellevue", "\(moved)")

        // Steve is free but off duty: no one can take these, they wait in line.
        let third = try submit("Third Customer", wait: true)
        let fourth = try submit("Fourth Customer", wait: true)
        #expect([third, fourth].map { $0["waitPosition"] as? Int } == [1, 2])
        let mechanics = try sam.call(Requests.op("mechanics"))["mechanics"] as? [[String: Any]] ?? []
        let steve = mechanics.first { $0["name"] as? String == "Steve Brimington" }
        #expect(steve?["onDuty"] as? Bool == false && steve?["busy"] as? Bool == false)
        let counts = try sam.call(Requests.op("stats"))[object: "mechanicCounts"]
        #expect(counts?["offDuty"] as? Int == 1 && counts?["free"] as? Int == 0 && counts?["busy"] as? Int == 2)

        // Mike's completion serves the first in line; Steve, back, takes the next.
        #expect(try ops.call(Requests.op("complete", ["quoteId": second.quoteID]))["ok"] as? Bool == true)
        let back = try sam.call(Requests.op("setDuty", ["mechanic": "Steve Brimington", "onDuty": true]))
        #expect(back["onDuty"] as? Bool == true)
        #expect(back.quote?["id"] as? Int == fourth.quoteID && mechanic(back) == "Steve Brimington", "\(back)")
        let served = try ops.call(Requests.op("get", ["quoteId": third.quoteID]))
        #expect(mechanic(served) == "Mike Fulton")

        let events = try #require(try ops.call(Requests.op("events", ["since": 0]))["events"] as? [[String: Any]])
        let steps: [(type: String, quote: Int?, mechanic: String?, by: String)] = [
            ("quote.submitted", first.quoteID, nil, "desk"), ("quote.ready", first.quoteID, nil, "desk"),
            ("quote.booked", first.quoteID, nil, "desk"), ("mechanic.busy", first.quoteID, "Steve Brimington", "desk"),
            ("quote.submitted", second.quoteID, nil, "desk"), ("quote.ready", second.quoteID, nil, "desk"),
            ("quote.booked", second.quoteID, nil, "desk"), ("mechanic.busy", second.quoteID, "Mike Fulton", "desk"),
            ("mechanic.off_duty", nil, "Steve Brimington", "sam"),
            ("quote.reassigned", first.quoteID, "Ali Bellevue", "sam"),
            ("mechanic.busy", first.quoteID, "Ali Bellevue", "sam"),
            ("mechanic.free", first.quoteID, "Steve Brimington", "sam"),
            ("quote.submitted", third.quoteID, nil, "desk"), ("quote.ready", third.quoteID, nil, "desk"),
            ("quote.waiting", third.quoteID, nil, "desk"),
            ("quote.submitted", fourth.quoteID, nil, "desk"), ("quote.ready", fourth.quoteID, nil, "desk"),
            ("quote.waiting", fourth.quoteID, nil, "desk"),
            ("quote.completed", second.quoteID, nil, "ops"), ("mechanic.free", second.quoteID, "Mike Fulton", "ops"),
            ("quote.booked", third.quoteID, nil, "ops"), ("mechanic.busy", third.quoteID, "Mike Fulton", "ops"),
            ("mechanic.on_duty", nil, "Steve Brimington", "sam"),
            ("quote.booked", fourth.quoteID, nil, "sam"), ("mechanic.busy", fourth.quoteID, "Steve Brimington", "sam"),
        ]
        #expect(events.map { $0["type"] as? String } == steps.map(\.type))
        #expect(events.map { $0["quoteId"] as? Int } == steps.map(\.quote))
        #expect(events.map { $0["by"] as? String } == steps.map(\.by))
        #expect(events.map { $0["seq"] as? Int } == Array(1...steps.count))
        for (event, step) in zip(events, steps) where step.mechanic != nil {
            #expect(event[object: "mechanic"]?["name"] as? String == step.mechanic, "\(event)")
        }
        let reassigned = try #require(events.first { $0["type"] as? String == "quote.reassigned" })
        #expect(reassigned["from"] as? String == "Steve Brimington" && reassigned["to"] as? String == "Ali Bellevue")
        #expect(reassigned[object: "quote"]?["state"] as? String == "booked")
    }
}
