import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("quoted end to end: errors, events, restarts", .serialized, .timeLimit(.minutes(3)))
struct ProtocolTests {
    @Test("every error code comes back with a clear message and changes nothing")
    func everyErrorCode() throws {
        let daemon = try DaemonProcess(arguments: ["--max-message-bytes", "4096"])
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)

        // Set the scene: one ready quote needing a master, one booked, one pending.
        let master = try client.call(Requests.submit(services: ["Timing Belt Replacement"])).quoteID
        let booked = try client.call(Requests.submit(mechanic: "Joe Murphy", book: true)).quoteID
        let pending = try client.call(Requests.submit(trim: nil)).quoteID
        let before = try client.call(Requests.op("stats"))["lastSeq"] as? Int

        func code(_ body: [UInt8]) throws -> String? {
            try client.sendRaw(body)
            let reply = try client.receive()
            #expect(reply["ok"] as? Bool == false)
            #expect((reply[object: "error"]?["message"] as? String)?.isEmpty == false)
            return reply.errorCode
        }
        func code(_ request: [String: Any]) throws -> String? {
            try code(Array(try JSONSerialization.data(withJSONObject: request)))
        }
        #expect(try code(Array("not json".utf8)) == "invalid_json")
        #expect(try code(Array("[1,2]".utf8)) == "invalid_request")
        #expect(try code(["op": "ping"]) == "unsupported_version")
        #expect(try code(["v": 2, "op": "ping"]) == "unsupported_version")
        #expect(try code(["v": 1, "op": "teleport"]) == "unknown_op")
        #expect(try code(["v": 1, "op": "get"]) == "invalid_request")
        #expect(try code(["v": 1, "op": "get", "quoteId": "seven"]) == "invalid_request")
        #expect(try code(["v": 1, "op": "list", "state": "lost"]) == "invalid_request")
        #expect(try code([UInt8](repeating: UInt8(ascii: " "), count: 5_000)) == "message_too_large")
        #expect(try code(Requests.submit(email: "nope")) == "invalid_submission")
        #expect(try code(Requests.op("complete", ["quoteId": pending])) == "illegal_transition")
        #expect(try code(Requests.op("book", ["quoteId": master, "mechanic": "Nick Main"])) == "cannot_perform")
        #expect(try code(Requests.op("book", ["quoteId": master, "mechanic": "Joe Murphy"])) == "mechanic_busy")
        #expect(try code(Requests.op("book", ["quoteId": master, "mechanic": "Nobody"])) == "unknown_mechanic")
        #expect(try code(Requests.op("get", ["quoteId": 9_999])) == "unknown_quote")
        #expect(try code(Requests.op("resolve", ["quoteId": pending, "year": 2015])) == "unresolved")
        #expect(
            try code(Requests.op("resolve", ["quoteId": pending, "services": ["Teleport"]])) == "invalid_resolution")
        #expect(try code(Requests.op("resolve", ["quoteId": pending, "price": "lots"])) == "invalid_request")
        // A DEALER that forgets the delimiter and sends two bodies: malformed, still answered.
        try client.socket.send(multipart: [Array("{}".utf8), Array("{}".utf8)])
        #expect(try client.receive().errorCode == "malformed_envelope")

        // Use up every master, then ask again.
        _ = try client.call(Requests.op("book", ["quoteId": master]))
        let another = try client.call(Requests.submit(services: ["Power Steering Replacement"])).quoteID
        #expect(try code(Requests.op("book", ["quoteId": another])) == "no_mechanic_available")

        let after = try client.call(Requests.op("stats"))
        // Only the two successful changes above moved the log: the book (2 events) and the submit (2 events).
        #expect(after["lastSeq"] as? Int == (before ?? 0) + 4)
        _ = booked
    }

    @Test("events carry a gap-free seq; a missed range is replayed with the events op, in order")
    func eventsAndReplay() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        // Changes made before anyone subscribes: a missed range.
        for index in 0..<5 { _ = try client.call(Requests.submit(key: "early-\(index)", book: index % 2 == 0)) }
        let subscriber = try Subscriber(context, endpoint: daemon.events, topics: ["quote.", "mechanic."])
        // Wait until the subscription is live: keep making changes until one is heard.
        var live: [[String: Any]] = []
        var made = 0
        while live.isEmpty {
            _ = try client.call(Requests.submit(key: "probe-\(made)"))
            made += 1
            if let event = try subscriber.next(timeout: .milliseconds(200)) { live.append(event.body) }
            try #require(made < 100)
        }
        for index in 0..<10 { _ = try client.call(Requests.submit(key: "late-\(index)", book: true)) }
        let lastSeq = try #require(try client.call(Requests.op("ping"))["lastSeq"] as? Int)
        while (live.last?["seq"] as? Int ?? 0) < lastSeq {
            let event = try #require(try subscriber.next())
            live.append(event.body)
        }
        let liveSeqs = live.compactMap { $0["seq"] as? Int }
        #expect(liveSeqs == Array(liveSeqs[0]...lastSeq), "live events arrive in order without gaps")
        // Fill the missed start by replay, in pages.
        var replayed: [Int] = []
        var since = 0
        while since < liveSeqs[0] - 1 {
            let page = try client.call(Requests.op("events", ["since": since, "limit": 7]))
            let seqs = (page["events"] as? [[String: Any]] ?? []).compactMap { $0["seq"] as? Int }
            try #require(!seqs.isEmpty)
            replayed += seqs
            since = seqs.last!
        }
        #expect(replayed == Array(1...replayed.count), "replay pages come in order, gap-free")
        #expect(Set(replayed).union(liveSeqs).sorted() == Array(1...lastSeq), "replay and live together miss nothing")
    }

    @Test(
        "subscribers come and go: changes made while no one listens are never heard, and each newcomer hears every event from its first on, as logged"
    )
    func subscribersComeAndGo() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        var made = 0
        for round in 0..<3 {
            // Changes no one can hear: nothing is connected to the events socket.
            for index in 0..<5 { _ = try client.call(Requests.submit(key: "unheard-\(round)-\(index)", book: true)) }
            let unheard = try #require(try client.call(Requests.op("ping"))["lastSeq"] as? Int)
            let subscriber = try Subscriber(context, endpoint: daemon.events, topics: ["quote.", "mechanic."])
            let heard = try subscriber.hear(through: client, more: 10) {
                made += 1
                _ = try client.call(Requests.submit(key: "heard-\(made)", book: made % 2 == 0))
            }
            let first = try #require(heard.first?["seq"] as? Int)
            #expect(first > unheard, "round \(round): heard from \(first), after \(unheard)")
            #expect(try heardAsLogged(heard, client), "round \(round)")
        }
    }

    @Test("a restart in the middle loses nothing and the sequence continues")
    func restartLosesNothing() throws {
        let first = try DaemonProcess()
        let context = try Context()
        var ids: [Int] = []
        do {
            let client = try Client(context, endpoint: first.commands)
            for index in 0..<20 {
                ids.append(try client.call(Requests.submit(key: "r\(index)", book: index < 5)).quoteID)
            }
        }
        #expect(first.stop() == 0)
        let second = try DaemonProcess(stateDirectory: first.stateDirectory)
        defer { #expect(second.stop() == 0) }
        let client = try Client(context, endpoint: second.commands)
        for id in ids {
            let reply = try client.call(Requests.op("get", ["quoteId": id]))
            #expect(reply["ok"] as? Bool == true)
        }
        let stats = try client.call(Requests.op("stats"))
        #expect(stats["lastSeq"] as? Int == 20 * 2 + 5 * 2)
        #expect((stats[object: "counts"]?["booked"] as? Int) == 5)
        let next = try client.call(Requests.submit(key: "after-restart"))
        #expect(next.quoteID == ids.last! + 1)
        let events = try client.call(Requests.op("events", ["since": 50, "limit": 10]))
        #expect((events["events"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [51, 52])
    }

    @Test("SIGTERM with requests in flight: every acknowledged one is persisted and quoted exits 0")
    func sigtermWithRequestsInFlight() throws {
        let daemon = try DaemonProcess()
        let context = try Context()
        var acknowledged: [String: Int] = [:]
        let sender = try Client(context, endpoint: daemon.commands)
        // Pipeline many submissions without waiting, then stop the daemon mid-stream.
        for index in 0..<2_000 { try sender.send(Requests.submit(key: "inflight-\(index)", id: "inflight-\(index)")) }
        var replies = 0
        while replies < 50 {
            let reply = try sender.receive()
            if reply["ok"] as? Bool == true, let id = reply["id"] as? String { acknowledged[id] = reply.quoteID }
            replies += 1
        }
        kill(daemon.process.processIdentifier, SIGTERM)
        // Take whatever else was acknowledged before the sockets closed.
        try sender.socket.set(.receiveTimeout, 2_000)
        while let reply = try? sender.receive() {
            if reply["ok"] as? Bool == true, let id = reply["id"] as? String { acknowledged[id] = reply.quoteID }
        }
        #expect(daemon.stop() == 0)
        #expect(acknowledged.count >= 50)

        let restarted = try DaemonProcess(stateDirectory: daemon.stateDirectory)
        defer { #expect(restarted.stop() == 0) }
        let client = try Client(context, endpoint: restarted.commands)
        for (key, id) in acknowledged {
            let reply = try client.call(Requests.submit(key: key))
            #expect(reply["replayed"] as? Bool == true, "\(key) was acknowledged but not kept")
            #expect(reply.quoteID == id)
        }
    }
}
