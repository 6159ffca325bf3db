import Foundation
import TestSupport
import Testing
import ZeroMQ

/// The machine-readable contract: `scripts/check-contract` checks the schemas and the
/// AsyncAPI document with validators' meta-schema checks, and mutates sample messages of every
/// kind, each mutation to be refused. (`scripts/test` runs it again over every message the
/// end-to-end tests exchanged.)
@Suite("The contract documents")
struct ContractTests {
    @Test("The schemas and the AsyncAPI document are valid, and every mutation of a valid message is refused")
    func documentsAndMutations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let run = try Binaries.run(
            absolute: Python.executable, [root.appendingPathComponent("scripts/check-contract").path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for schema in ["definitions", "request", "reply", "event"] {
            #expect(run.stdout.contains("\(schema).schema.json: a valid JSON Schema 2020-12 document"), "\(run.stdout)")
        }
        #expect(run.stdout.contains("docs/asyncapi.yaml: a valid AsyncAPI 3.0 document over the three schemas"))
        #expect(run.stdout.contains("(jsonschema): 17 samples valid; 38 mutations"), "\(run.stdout)")
        #expect(run.stdout.contains("(jsonschema-rs): 17 samples valid; 38 mutations"), "\(run.stdout)")
    }

    @Test("A tour of the protocol: every operation and every event type, all through the logged client and subscriber")
    func everyOperationAndEventType() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let events = try Subscriber(context, endpoint: daemon.events)
        // Until the subscription is in place, events go nowhere: submit until one arrives.
        var first: (topic: String, body: [String: Any])?
        for _ in 0..<50 where first == nil {
            _ = try client.call(Requests.submit(name: "Warm Up"))
            first = try events.next(timeout: .milliseconds(200))
        }
        _ = try #require(first, "the subscription never took hold")

        // The built-in ten mechanics all booked, an eleventh booking waits in line.
        let booked = try (0..<10).map { index in
            try client.call(Requests.submit(name: "Booked \(index)", book: true)).quoteID
        }
        var waits = Requests.submit(name: "In Line", book: true)
        waits["wait"] = true
        let waiting = try client.call(waits)
        #expect(waiting.quote?["state"] as? String == "waiting", "\(waiting)")
        _ = try client.call(Requests.op("waiting"))
        // A completion books the waiting quote in the same transaction.
        #expect(try client.call(Requests.op("complete", ["quoteId": booked[0]]))["ok"] as? Bool == true)
        let master = booked[0]
        // A cancelled booking frees its mechanic, whom an explicit book takes.
        #expect(try client.call(Requests.op("cancel", ["quoteId": booked[1]]))["ok"] as? Bool == true)
        let ready = try client.call(Requests.submit(name: "Booked Later")).quoteID
        #expect(try client.call(Requests.op("book", ["quoteId": ready]))["ok"] as? Bool == true)
        let pending = try client.call(Requests.submit(trim: nil)).quoteID
        #expect(try client.call(Requests.op("resolve", ["quoteId": pending, "trim": "EX"]))["ok"] as? Bool == true)
        #expect(try client.call(Requests.op("cancel", ["quoteId": pending, "reason": "tour"]))["ok"] as? Bool == true)
        // Support's day: a mechanic off duty, their quote reassigned, then back on duty.
        let holder = try client.call(Requests.op("get", ["quoteId": booked[2]])).quote?["mechanic"] as? [String: Any]
        let name = try #require(holder?["name"] as? String)
        let off = try client.call(Requests.op("setDuty", ["mechanic": name, "onDuty": false]))
        #expect(off["onDuty"] as? Bool == false, "\(off)")
        let moved = try client.call(Requests.op("reassign", ["quoteId": booked[2]]))
        #expect(moved["ok"] as? Bool == true, "\(moved)")
        #expect(try client.call(Requests.op("setDuty", ["mechanic": name, "onDuty": true]))["ok"] as? Bool == true)
        // The roster changed live, then the whole catalog as it was read back.
        let added = try client.call(Requests.op("addMechanic", ["name": "Nia Quill", "skill": "master"]))
        #expect(added["ok"] as? Bool == true, "\(added)")
        let updated = try client.call(Requests.op("updateMechanic", ["mechanic": "Nia Quill", "skill": "junior"]))
        #expect(updated["ok"] as? Bool == true, "\(updated)")
        let retired = try client.call(Requests.op("retireMechanic", ["mechanic": "Nia Quill"]))
        #expect(retired["ok"] as? Bool == true, "\(retired)")
        var catalog = try #require(try client.call(Requests.op("catalog"))["catalog"] as? [String: Any])
        var services = catalog["services"] as? [[String: Any]] ?? []
        services[0]["price"] = "99.00"
        catalog["services"] = services
        let applied = try client.call(Requests.op("applyCatalog", ["catalog": catalog]))
        #expect(applied["catalogVersion"] as? Int == 5, "\(applied)")
        for read in ["get", "list", "mechanics", "services", "stats", "events", "ping", "waiting", "catalog"] {
            let fields: [String: Any] = read == "get" ? ["quoteId": master] : read == "events" ? ["since": 0] : [:]
            #expect(try client.call(Requests.op(read, fields))["ok"] as? Bool == true, "\(read)")
        }
        // Every event of the tour, live: each logged for the contract check.
        let last = try #require(try client.call(Requests.op("ping"))["lastSeq"] as? Int)
        var types: Set<String> = [first?.topic ?? ""]
        var seen = first?.body["seq"] as? Int ?? 0
        while seen < last, let event = try events.next() {
            types.insert(event.topic)
            seen = event.body["seq"] as? Int ?? seen
        }
        #expect(
            types
                == [
                    "quote.submitted", "quote.ready", "quote.pending", "quote.booked", "quote.waiting",
                    "quote.completed", "quote.cancelled", "quote.reassigned", "mechanic.busy", "mechanic.free",
                    "mechanic.off_duty", "mechanic.on_duty", "mechanic.added", "mechanic.updated", "mechanic.retired",
                    "catalog.applied",
                ])
    }
}
