import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("quoted end to end: the articles' scenarios", .serialized, .timeLimit(.minutes(3)))
struct ScenarioTests {
    @Test("John Lee: pending without trim, resolved at $66.25, booked with Joe Murphy, completed with a receipt")
    func johnLee() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let subscriber = try Subscriber(context, endpoint: daemon.events)
        let client = try Client(context, endpoint: daemon.commands)

        let submitted = try client.call(
            Requests.submit(
                name: "John Lee", email: "john.lee@example.com", services: ["Oil Change", "Brake Inspection"],
                trim: nil, mechanic: "Joe Murphy", id: 1))
        #expect(submitted["ok"] as? Bool == true)
        #expect(submitted["id"] as? Int == 1, "the request id is echoed")
        let id = submitted.quoteID
        #expect(submitted.quote?["state"] as? String == "pending")
        let reasons = submitted.quote?["pendingReasons"] as? [[String: Any]]
        #expect(reasons?.map { $0["message"] as? String } == ["car.trim missing"])
        #expect(
            submitted.quote?["message"] as? String
                == "Your quote is currently pending, we will get back to you with a ready quote soon")

        let resolved = try client.call(Requests.op("resolve", ["quoteId": id, "trim": "LE", "price": "66.25"]))
        #expect(resolved.quote?["state"] as? String == "ready")
        #expect(resolved.quote?["priceCents"] as? Int == 6_625)
        #expect(
            resolved.quote?["message"] as? String
                == "Your quote is ready. The total for the services you have requested is: $66.25")

        let booked = try client.call(Requests.op("book", ["quoteId": id]))
        #expect(booked.quote?[object: "mechanic"]?["name"] as? String == "Joe Murphy")
        #expect(booked.quote?["message"] as? String == "Your appointment has been booked with Joe Murphy.")

        let completed = try client.call(Requests.op("complete", ["quoteId": id]))
        #expect(completed.quote?["state"] as? String == "completed")
        let receipt = try #require(completed.quote?[object: "receipt"])
        #expect(receipt["totalCents"] as? Int == 6_625)
        #expect(receipt["total"] as? String == "$66.25")
        #expect(receipt[object: "mechanic"]?["name"] as? String == "Joe Murphy")
        #expect(receipt[object: "customer"]?["name"] as? String == "John Lee")
        #expect(completed.quote?["message"] as? String == "Thank you for using YourMechanic.")

        let fetched = try client.call(Requests.op("get", ["quoteId": id]))
        let history = (fetched["history"] as? [[String: Any]])?.compactMap { $0["to"] as? String }
        #expect(history == ["submitted", "pending", "ready", "booked", "completed"])

        // Every transition was published: what the live stream missed (slow joiner), replay fills.
        let expected = [
            "quote.submitted", "quote.pending", "quote.ready", "quote.booked", "mechanic.busy", "quote.completed",
            "mechanic.free",
        ]
        let events = try collectEvents(subscriber: subscriber, client: client, count: expected.count)
        #expect(events.map { $0["type"] as? String } == expected)
        #expect(events.map { $0["seq"] as? Int } == Array(1...expected.count))
        let transitions = events.filter { ($0["type"] as? String)?.hasPrefix("quote.") == true }.map {
            "\($0["from"] as? String ?? "-")->\($0["to"] as? String ?? "?")"
        }
        #expect(
            transitions == [
                "-->submitted", "submitted->pending", "pending->ready", "ready->booked", "booked->completed",
            ])
    }

    @Test("Reza's three junior services are priced automatically at $67.00")
    func rezaAutoPriced() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands, type: .req)
        let reply = try client.call(
            Requests.submit(services: ["Brake Inspection", "Battery Inspection", "Oil Change"]))
        #expect(reply["ok"] as? Bool == true)
        #expect(reply.quote?["state"] as? String == "ready")
        #expect(reply.quote?["priceCents"] as? Int == 6_700)
        #expect(reply.quote?["price"] as? String == "$67.00")
        #expect(reply.quote?["currency"] as? String == "USD")
    }

    @Test("Mike Fulton is refused for a brake pad replacement, and nothing is created")
    func mikeFultonRefused() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let reply = try client.call(Requests.submit(services: ["Brake Pad Replacement"], mechanic: "Mike Fulton"))
        #expect(reply["ok"] as? Bool == false)
        #expect(reply.errorCode == "not_in_catalog")
        let problems = reply[object: "error"]?["problems"] as? [[String: Any]]
        #expect(problems?.first?["field"] as? String == "mechanic")
        #expect(problems?.first?["message"] as? String == "Mike Fulton cannot perform Brake Pad Replacement")
        let stats = try client.call(Requests.op("stats"))
        #expect(stats["lastSeq"] as? Int == 0)
    }

    @Test("the same idempotency key returns the original quote and creates nothing")
    func idempotentResubmission() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let first = try client.call(Requests.submit(key: "retry-me", book: true))
        let second = try client.call(Requests.submit(key: "retry-me", book: true))
        #expect(first.quoteID == second.quoteID)
        #expect(second["replayed"] as? Bool == true)
        #expect(first.quote?["state"] as? String == "booked")
        let stats = try client.call(Requests.op("stats"))
        #expect((stats[object: "counts"]?["booked"] as? Int) == 1)
        #expect(stats["lastSeq"] as? Int == 4)
    }

    @Test(
        "junior work goes to Steve, Mike, Ali; the freed get it back longest-free first; with every junior busy, an apprentice"
    )
    func dispatchOrder() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        func book() throws -> (quote: Int, mechanic: String?) {
            let reply = try client.call(Requests.submit(services: ["Oil Change", "Brake Inspection"], book: true))
            #expect(reply.quote?["state"] as? String == "booked", "\(reply)")
            return (reply.quoteID, reply.quote?[object: "mechanic"]?["name"] as? String)
        }
        /// Completes `quote` and waits until the store's clock has moved past that moment, so
        /// the next release is later by at least a millisecond (the resolution kept).
        func complete(_ quote: Int) throws {
            let reply = try client.call(Requests.op("complete", ["quoteId": quote]))
            #expect(reply.quote?["state"] as? String == "completed")
            let released = Date().addingTimeInterval(0.002)
            while Date() < released { sched_yield() }
        }

        let first = try (0..<3).map { _ in try book() }
        #expect(first.map(\.mechanic) == ["Steve Brimington", "Mike Fulton", "Ali Bellevue"])
        try complete(first[1].quote)
        try complete(first[0].quote)
        #expect(try book().mechanic == "Mike Fulton", "free the longest goes first")
        #expect(try book().mechanic == "Steve Brimington")
        #expect(try book().mechanic == "Dick Duchess", "every junior busy: the least skilled above them")
    }
}

/// Live events from `subscriber`, with any gap (including the slow-joiner start) filled by
/// the `events` replay, until `count` consecutive events from seq 1 are known.
func collectEvents(subscriber: borrowing Subscriber, client: borrowing Client, count: Int) throws -> [[String: Any]] {
    var bySeq: [Int: [String: Any]] = [:]
    while bySeq.count < count {
        guard let (topic, body) = try subscriber.next(timeout: .milliseconds(500)) else {
            // Nothing live: replay what is missing.
            for event in try allEvents(client) { bySeq[event["seq"] as? Int ?? 0] = event }
            continue
        }
        #expect(topic == body["type"] as? String)
        bySeq[body["seq"] as? Int ?? 0] = body
    }
    return bySeq.keys.sorted().map { bySeq[$0]! }
}
