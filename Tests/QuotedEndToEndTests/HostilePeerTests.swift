import Foundation
import Synchronization
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// quoted as a hostile peer meets it, with ordinary keys and ordinary requests: one test per
/// way it could be crashed, stalled, bloated, fooled or left open, against the real binaries.
@Suite("quoted end to end: hostile peers", .serialized, .timeLimit(.minutes(3)))
struct HostilePeerTests {
    // MARK: Crashes

    @Test("money that would overflow is refused, never trapped, in the catalog, in requests and on a currency change")
    func moneyNeverTraps() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalogPath = directory + "/catalog.json"

        // A price past the bound is named at start-up; quoted does not start on it.
        try Self.writeCatalog(catalogPath, services: [("Huge", 100_000_000_001)])
        let refused = try Binaries.run(
            "quoted",
            [
                "--catalog", catalogPath, "--state-dir", directory + "/refused", "--endpoint", "tcp://127.0.0.1:*",
                "--events", "tcp://127.0.0.1:*",
            ])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("services[0].price"), "\(refused.stderr)")

        // Every price at the bound, every service on one quote, a 100% coupon: exact, no trap.
        let services = (0..<32).map { ("Service \($0)", Int64(100_000_000_000)) }
        try Self.writeCatalog(catalogPath, services: services, coupons: [("ALL", 100)])
        let stateDirectory = directory + "/state"
        var daemon = try DaemonProcess(stateDirectory: stateDirectory, arguments: ["--catalog", catalogPath])
        let context = try Context()
        var later = 0
        do {
            let client = try Client(context, endpoint: daemon.commands)
            var everything = Requests.submit(services: services.map(\.0))
            everything["coupon"] = "ALL"
            let priced = try client.call(everything)
            #expect(priced["ok"] as? Bool == true, "\(priced)")
            #expect(priced.quote?["priceCents"] as? Int == 0)
            var full = Requests.submit(services: services.map(\.0))
            full["id"] = "full"
            #expect(try client.call(full).quote?["priceCents"] as? Int == 3_200_000_000_000)

            // Two pending quotes, priced in USD.
            let pending = try client.call(Requests.submit(services: ["Service 1"], trim: nil)).quoteID
            later = try client.call(Requests.submit(services: ["Service 1"], trim: nil)).quoteID
            #expect(pending > 0 && later > 0)
            let huge = try client.call(Requests.op("resolve", ["quoteId": pending, "priceCents": Int64.max]))
            // Beyond what the schema allows (100000000000 cents): refused as malformed.
            #expect(huge.errorCode == "invalid_request", "\(huge)")

            // A catalog that would move open USD quotes to EUR is refused; USD stays in force.
            try Self.writeCatalog(catalogPath, currency: "EUR", services: services)
            let euros = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: catalogPath)))
            let moved = try client.call(Requests.op("applyCatalog", ["catalog": euros]))
            #expect(moved.errorCode == "invalid_catalog", "\(moved)")
            // The file is only compared on SIGHUP, never applied behind the store's back.
            kill(daemon.process.processIdentifier, SIGHUP)
            #expect(daemon.waitForLog { $0.contains { $0.contains("differs from the store's catalog") } })
            let resolved = try client.call(Requests.op("resolve", ["quoteId": pending, "price": "10.00"]))
            #expect(resolved["ok"] as? Bool == true, "\(resolved)")
            #expect(resolved.quote?["currency"] as? String == "USD", "\(resolved)")
        }
        #expect(daemon.stop() == 0)
        // Its last line, logged once everything stopped, is out before the process ends.
        #expect(daemon.waitForLog { $0.last?.contains("quoted stopped") == true }, "\(daemon.log.suffix(5))")

        // Restarted on the EUR file: the store's USD catalog stays in force, with a warning.
        daemon = try DaemonProcess(stateDirectory: stateDirectory, arguments: ["--catalog", catalogPath])
        defer { #expect(daemon.stop() == 0) }
        #expect(daemon.waitForLog { $0.contains { $0.contains("differs from the store's catalog") } })
        let client = try Client(context, endpoint: daemon.commands)
        let usd = try client.call(Requests.op("resolve", ["quoteId": later, "price": "10.00"]))
        #expect(usd["ok"] as? Bool == true, "\(usd)")
        #expect(usd.quote?["currency"] as? String == "USD", "\(usd)")
        #expect(try client.call(Requests.op("ping"))["pong"] as? Bool == true)
    }

    // MARK: Stalls

    @Test("huge submissions and pipelined event replays never starve the watchdog, pings or memory")
    func noStall() throws {
        let watchdog = try WatchdogListener()
        let daemon = try DaemonProcess(environment: [
            "NOTIFY_SOCKET": watchdog.path, "WATCHDOG_USEC": "2000000",
        ])
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let filler = try Client(context, endpoint: daemon.commands)
        // A log of 4,000 events to replay.
        for index in 0..<2_000 { try filler.send(Requests.submit(id: index)) }
        for _ in 0..<2_000 { _ = try filler.receive() }

        let hostile = try Client(context, endpoint: daemon.commands)
        let started = watchdog.count
        // 60 KB submissions, thousands of distinct unknown services each.
        let services = (0..<2_000).map { "unknown service number \($0)" }
        for index in 0..<20 { try hostile.send(Requests.submit(services: services, id: "big-\(index)")) }
        // Pipelined replays of the whole log.
        for index in 0..<300 { try hostile.send(Requests.op("events", ["since": 0, "limit": 10_000, "id": index])) }

        let other = try Client(context, endpoint: daemon.commands)
        // Another peer is still answered. How soon is the machine's: on two cores shared with
        // other tests' daemons, a debug build's first batches of the flood have taken longer
        // than the client's usual 20 s. A stall is what the watchdog's gap below checks, not a
        // timing here, so the ping, and each of the flood's own replies, waits as long as the
        // test may run.
        try other.socket.set(.receiveTimeout, 120_000)
        try hostile.socket.set(.receiveTimeout, 120_000)
        #expect(try other.call(Requests.op("ping"))["pong"] as? Bool == true)
        var largest = 0
        for _ in 0..<320 {
            let reply = try hostile.receive()
            if let id = reply["id"] as? String, id.hasPrefix("big-") {
                #expect(reply.errorCode == "invalid_request" || reply.errorCode == "invalid_submission", "\(reply)")
            }
            largest = max(largest, (try? JSONSerialization.data(withJSONObject: reply).count) ?? 0)
        }
        #expect(largest <= 80_000, "a page stays within the reply budget: \(largest) bytes")
        #expect(watchdog.count > started, "the watchdog was told while the flood went on")
        #expect(watchdog.longestGap < .seconds(2), "WATCHDOG=1 within WATCHDOG_USEC: \(watchdog.longestGap)")
        #expect(daemon.peakResidentKiB < 256 * 1_024, "peak RSS \(daemon.peakResidentKiB) KiB")
    }

    // MARK: Memory

    @Test("a peer that never reads its replies and a subscriber that never reads cannot grow memory without bound")
    func memoryIsBounded() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        // Large quotes: 32 long service names and a long address each.
        let services = (0..<32).map { String(repeating: "s", count: 200) + "\($0)" }
        var large = Requests.submit(services: services)
        large["customer"] = [
            "name": "Hostile", "email": "h@example.com", "address": String(repeating: "a", count: 1_000),
        ]
        // A subscriber that never reads, from the start.
        let stalled = try Socket(context, type: .sub)
        try stalled.set(.linger, 0)
        try stalled.set(.receiveHighWaterMark, 1)
        try stalled.set(.receiveBuffer, 4_096)
        try stalled.set(.subscribe, [])
        try stalled.set(.receiveTimeout, 20_000)
        try stalled.connect(daemon.events)
        // Subscribed once an event arrives (submitted until one does); then never read again.
        var sent = 0
        while true {
            sent += 1
            #expect(try client.call(Requests.submit(id: "probe-\(sent)"))["ok"] as? Bool == true)
            var poller = Poller()
            poller.register(stalled)
            if try poller.poll(timeout: .milliseconds(200)) > 0, try stalled.receiveMultipart(dontWait: true) != nil {
                break
            }
        }
        for round in 0..<16 {
            for index in 0..<500 {
                large["id"] = round * 500 + index
                try client.send(large)
            }
            for _ in 0..<500 { #expect(try client.receive()["ok"] as? Bool == true) }
        }
        let afterEvents = daemon.residentKiB

        // A peer that asks for the biggest pages and never reads them.
        let greedy = try Socket(context, type: .dealer)
        try greedy.set(.linger, 0)
        try greedy.set(.receiveHighWaterMark, 1)
        try greedy.set(.receiveBuffer, 4_096)
        try greedy.set(.sendTimeout, 20_000)
        try greedy.connect(daemon.commands)
        let page = Array(try JSONSerialization.data(withJSONObject: Requests.op("list", ["limit": 10_000])))
        for _ in 0..<300 { try greedy.send(multipart: [[], page]) }
        // Everything sent has been read by quoted once a ping behind it is answered.
        let probe = try Client(context, endpoint: daemon.commands)
        for _ in 0..<3 { #expect(try probe.call(Requests.op("stats"))["ok"] as? Bool == true) }
        let afterPages = daemon.residentKiB
        #expect(afterEvents < 256 * 1_024, "RSS \(afterEvents) KiB with a stalled subscriber")
        #expect(afterPages < 256 * 1_024, "RSS \(afterPages) KiB with a greedy peer")
        let reply = try probe.call(Requests.op("list", ["limit": 10_000]))
        let bytes = try JSONSerialization.data(withJSONObject: reply).count
        #expect(
            bytes <= 80_000 && reply["truncated"] as? Bool == true && reply["next"] as? Int != nil, "\(bytes) bytes")
    }

    @Test("a subscriber that sends a frame longer than any topic loses its connection; others still hear events")
    func oversizedSubscriptionIsDropped() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let hostile = try Socket(context, type: .sub)
        try hostile.set(.linger, 0)
        let monitor = try hostile.openMonitor(events: [.connected, .disconnected])
        defer { hostile.stopMonitor() }
        try monitor.set(.receiveTimeout, 20_000)
        try hostile.set(.subscribe, Array(repeating: UInt8(ascii: "q"), count: 4_096))
        try hostile.connect(daemon.events)
        #expect(try monitor.receiveMonitorEvent()?.event == .connected)
        #expect(try monitor.receiveMonitorEvent()?.event == .disconnected)

        let listener = try Socket(context, type: .sub)
        try listener.set(.linger, 0)
        try listener.set(.subscribe, Array("quote.".utf8))
        try listener.connect(daemon.events)
        var poller = Poller()
        poller.register(listener)
        // Subscribed once an event arrives: submitted until one does.
        let deadline = ContinuousClock.now + .seconds(30)
        var heard = false
        while !heard && ContinuousClock.now < deadline {
            #expect(try client.call(Requests.submit())["ok"] as? Bool == true)
            heard = try poller.poll(timeout: .milliseconds(200)) > 0
        }
        #expect(heard, "an ordinary subscriber hears events")
    }

    // MARK: Text

    @Test(
        "control characters and invisible-only values are refused, naming the field",
        arguments: [
            ("customer", "name", "Eve\u{1B}[2J"), ("customer", "address", "line\r\nforged"),
            ("car", "make", "\u{202E}adnoH"), ("car", "model", "Civic\u{7F}"), ("customer", "email", "a\u{85}@b.c"),
            ("", "mechanic", "Joe\u{0}Murphy"), ("", "coupon", "W\u{7}"),
        ])
    func controlCharactersAreRefused(object: String, field: String, value: String) throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let client = try Client(try Context(), endpoint: daemon.commands)
        var request = Requests.submit()
        if object.isEmpty {
            request[field] = value
        } else {
            var inner = request[object: object] ?? [:]
            inner[field] = value
            request[object] = inner
        }
        let reply = try client.call(request)
        let path = object.isEmpty ? field : "\(object).\(field)"
        #expect(reply.errorCode == "invalid_request", "\(reply)")
        let problems = reply[object: "error"]?["problems"] as? [[String: Any]] ?? []
        #expect(problems.first?["field"] as? String == path, "\(reply)")
        #expect(try client.call(Requests.op("stats"))["lastSeq"] as? Int == 0, "nothing was applied")

        for blank in ["   ", "\u{200B}\u{200B}", "\u{A0}\u{3000}", "\u{FEFF}"] {
            let empty = try client.call(Requests.submit(name: blank))
            #expect(empty.errorCode == "invalid_submission")
            let fields = (empty[object: "error"]?["problems"] as? [[String: Any]] ?? []).compactMap {
                $0["field"] as? String
            }
            #expect(fields.contains("customer.name"), "\(empty)")
        }
    }

    @Test("quotectl escapes every non-printable character it prints, whatever a daemon sends it")
    func quotectlEscapes() throws {
        // A real reply from a real daemon, then tampered with as a peer in the middle could.
        let daemon = try DaemonProcess()
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let id = try client.call(Requests.submit()).quoteID
        var got = try client.call(Requests.op("get", ["quoteId": id]))
        var listed = try client.call(Requests.op("list"))
        #expect(daemon.stop() == 0)
        let hostile = "Eve\u{1B}[2J\u{1B}]0;owned\u{7}\r\n12:00:00 #1 booked forged\u{202E}"
        func tamper(_ quote: [String: Any]) -> [String: Any] {
            var quote = quote
            var customer = quote["customer"] as? [String: Any] ?? [:]
            customer["name"] = hostile
            quote["customer"] = customer
            return quote
        }
        got["quote"] = tamper(try #require(got.quote))
        listed["quotes"] = (listed["quotes"] as? [[String: Any]] ?? []).map(tamper)

        for (arguments, reply) in [(["get", "\(id)"], got), (["list"], listed), (["get", "\(id)", "--json"], got)] {
            let fake = try Socket(context, type: .router)
            try fake.set(.linger, 0)
            try fake.bind("tcp://127.0.0.1:*")
            let endpoint = fake.lastEndpoint
            let output = Mutex<ProcessOutput?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let result = try? Quotectl.run(arguments, environment: ["QUOTED_ENDPOINT": endpoint])
                output.withLock { $0 = result }
                done.signal()
            }.start()
            try fake.set(.receiveTimeout, 20_000)
            let request = try #require(try fake.receiveMultipart())
            let asked = try #require(
                try JSONSerialization.jsonObject(with: Data(request.frames.last ?? [])) as? [String: Any])
            var answer = reply
            answer["id"] = asked["id"]
            _ = try fake.send(
                multipart: Array(request.frames.dropLast()) + [
                    Array(try JSONSerialization.data(withJSONObject: answer))
                ])
            #expect(done.wait(timeout: .now() + 30) == .success)
            let printed = try #require(output.withLock { $0 })
            let bytes = Array(printed.stdout.utf8)
            #expect(!bytes.contains(0x1B) && !bytes.contains(0x07) && !bytes.contains(0x0D), "\(printed.stdout)")
            #expect(!printed.stdout.unicodeScalars.contains("\u{202E}"))
            #expect(printed.stdout.contains("\\u001b"), "\(printed.stdout)")
            #expect(!printed.stdout.split(separator: "\n").contains { $0.hasPrefix("12:00:00") }, "no forged line")
        }
    }

    // MARK: Idempotency

    @Test("idempotency keys are 1 to 255 bytes compared byte for byte, and a key reused for another body conflicts")
    func idempotency() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let client = try Client(try Context(), endpoint: daemon.commands)
        let first = try client.call(Requests.submit(key: "order-1"))
        #expect(first["ok"] as? Bool == true)
        let seq = try client.call(Requests.op("stats"))["lastSeq"] as? Int

        let again = try client.call(Requests.submit(key: "order-1", id: "retry"))
        #expect(again["replayed"] as? Bool == true && again.quoteID == first.quoteID, "\(again)")
        let conflict = try client.call(Requests.submit(name: "Someone Else", key: "order-1"))
        #expect(conflict.errorCode == "idempotency_conflict", "\(conflict)")
        #expect((conflict[object: "error"]?["message"] as? String)?.contains("order-1") == true)
        let booking = try client.call(Requests.submit(key: "order-1", book: true))
        #expect(booking.errorCode == "idempotency_conflict", "book differs: \(booking)")
        for key in ["", "order-1\u{0}", "order-1\u{0}tail", String(repeating: "k", count: 256)] {
            let refused = try client.call(Requests.submit(key: key))
            #expect(refused.errorCode == "invalid_request", "\(key.utf8.count) bytes: \(refused)")
        }
        #expect(try client.call(Requests.op("stats"))["lastSeq"] as? Int == seq, "nothing was applied")
        let longest = try client.call(Requests.submit(key: String(repeating: "k", count: 255)))
        #expect(longest["ok"] as? Bool == true && longest["replayed"] == nil)
        let other = try client.call(Requests.submit(key: "order-2"))
        #expect(other.quoteID != first.quoteID)
    }

    @Test("a refusal raised while a request is decoded still carries the request's id")
    func refusalsCarryTheID() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let client = try Client(try Context(), endpoint: daemon.commands)
        let frames = [
            #"{"v":1,"op":"get","id":"r-1","quoteId":"seven"}"#, #"{"v":1,"op":"get","id":7,"quoteId":null,"x":[1,]}"#,
            #"{"v":1,"op":"list","id":"r-3","limit":1.5}"#, #"{"v":1,"op":"submit","id":"r-4","services":[1]}"#,
            #"{"v":1,"op":"submit","id":"r-5","customer":{"name":"\u001b"}}"#, #"{"id":"r-6","op":"ping"}"#,
        ]
        let expected: [Any?] = ["r-1", nil, "r-3", "r-4", "r-5", "r-6"]
        for (frame, id) in zip(frames, expected) {
            try client.sendRaw(Array(frame.utf8))
            let reply = try client.receive()
            #expect(reply["ok"] as? Bool == false)
            #expect((reply["id"] as? String) == (id as? String), "\(frame) -> \(reply)")
        }
    }

    // MARK: The store

    @Test(
        "a store file deleted or replaced under quoted is noticed: nothing more is acknowledged, ping and readyz say why",
        arguments: ["deleted", "replaced"])
    func vanishedStore(how: String) throws {
        let port = try freePort()
        let daemon = try DaemonProcess(arguments: ["--metrics", "127.0.0.1:\(port)"])
        defer { #expect(daemon.stop() == 0) }
        let client = try Client(try Context(), endpoint: daemon.commands)
        #expect(try client.call(Requests.submit())["ok"] as? Bool == true)
        let path = daemon.stateDirectory + "/quoted.sqlite"
        let files = FileManager.default
        switch how {
        case "deleted":
            for suffix in ["", "-wal", "-shm"] { try? files.removeItem(atPath: path + suffix) }
        default:
            try files.copyItem(atPath: path, toPath: path + ".copy")
            #expect(rename(path + ".copy", path) == 0)
        }
        let write = try client.call(Requests.submit(id: "after"))
        #expect(write.errorCode == "storage_error", "\(write)")
        let ping = try client.call(Requests.op("ping"))
        #expect(ping["store"] as? String == "down", "\(ping)")
        #expect((ping["storeError"] as? String)?.contains(how) == true, "\(ping)")
        let ready = try #require(try Scrape.waitForStatus(port: port, path: "/readyz", 503))
        #expect(ready.body.contains(how), "\(ready.body)")
        #expect(try client.call(Requests.submit(id: "again"))["ok"] as? Bool == false)
    }

    // MARK: Access

    @Test("a reload removes a withdrawn key even beside a malformed file, and refused handshakes do not flood the log")
    func revocationFailsClosed() throws {
        let secure = try SecureDaemon(clients: [("alice", "client"), ("bob", "client")])
        let context = try Context()
        #expect(try attempt(context, secure.daemon.commands, curve: try secure.keys("alice")).handshake == .succeeded)
        let alice = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("alice"))
        #expect(try alice.call(Requests.op("ping"))["ok"] as? Bool == true)

        try secure.revoke("alice")
        try "not a certificate\n".write(
            toFile: secure.clientsDirectory + "/broken.key", atomically: true, encoding: .utf8)
        try secure.reload()
        #expect(secure.daemon.log.contains { $0.contains("broken.key") }, "the bad file is named")
        #expect(try alice.call(Requests.op("ping")).errorCode == "forbidden")
        let bob = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("bob"))
        #expect(try bob.call(Requests.op("ping"))["ok"] as? Bool == true)

        let before = secure.daemon.log.filter { $0.contains("connection refused") }.count
        for index in 0..<60 {
            #expect(
                try attempt(context, secure.daemon.commands, curve: try secure.unlisted("x\(index)")).handshake
                    == .failed)
        }
        let warnings = secure.daemon.log.filter { $0.contains("connection refused") }.count - before
        #expect(warnings <= 10, "\(warnings) warnings for 60 refused keys")
    }

    @Test("past maxConnections new handshakes are refused, and taken again once a connection closes")
    func connectionLimit() throws {
        let secure = try SecureDaemon(
            clients: [("alice", "client"), ("bob", "client")], environment: ["QUOTED_MAX_CONNECTIONS": "2"])
        let context = try Context()
        do {
            let alice = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("alice"))
            #expect(try alice.call(Requests.op("ping"))["ok"] as? Bool == true)
            let bob = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("bob"))
            #expect(try bob.call(Requests.op("ping"))["ok"] as? Bool == true)
            // A connection is counted when accepted, before its handshake: the third is refused
            // at once (monitors are attached before quoted binds, and read before any handshake
            // is answered).
            let third = try attempt(context, secure.daemon.commands, curve: try secure.keys("alice")).handshake
            #expect(third == .failed)
            #expect(secure.daemon.waitForLog { $0.contains { $0.contains("(maxConnections)") } })
        }
        // Both closed: a handshake succeeds again as soon as quoted has seen them go.
        var outcome = Handshake.failed
        for _ in 0..<50 where outcome == .failed {
            outcome = try attempt(context, secure.daemon.commands, curve: try secure.keys("alice")).handshake
        }
        #expect(outcome == .succeeded)
    }

    @Test("peers of one address that connect and never speak cannot lock listed keys of other addresses out")
    func silentConnectionsOfOneAddress() throws {
        let secure = try SecureDaemon(
            clients: [("alice", "client")],
            environment: ["QUOTED_MAX_CONNECTIONS": "8", "QUOTED_MAX_CONNECTIONS_PER_ADDRESS": "4"])
        let context = try Context()
        let port = try #require(secure.daemon.commands.split(separator: ":").last.flatMap { UInt16($0) })
        // Twice the total limit, from 127.0.0.2, none of them starting a handshake.
        var flood: [Int32] = []
        defer { for descriptor in flood { close(descriptor) } }
        for _ in 0..<16 { flood.append(try Self.silentConnection(to: port, from: "127.0.0.2")) }
        // Once quoted has counted them, a listed key from that address is refused...
        let fromFlood = "tcp://127.0.0.2:0;127.0.0.1:\(port)"
        var outcome = Handshake.succeeded
        for _ in 0..<50 where outcome == .succeeded {
            outcome = try attempt(context, fromFlood, curve: try secure.keys("alice")).handshake
        }
        #expect(outcome == .failed)
        // ...and from any other address it is let in and served (within the flood's 10 s).
        let ping = try attempt(
            context, secure.daemon.commands, curve: try secure.keys("alice"), request: Requests.op("ping"))
        #expect(ping.handshake == .succeeded)
        #expect(ping.reply?["pong"] as? Bool == true)
        #expect(secure.daemon.waitForLog { $0.contains { $0.contains("(maxConnectionsPerAddress)") } })
        // The flood gone, its address connects again.
        for descriptor in flood { close(descriptor) }
        flood = []
        for _ in 0..<50 where outcome == .failed {
            outcome = try attempt(context, fromFlood, curve: try secure.keys("alice")).handshake
        }
        #expect(outcome == .succeeded)
    }

    /// A TCP connection from `source` to quoted's `port` on 127.0.0.1, that never says a word.
    private static func silentConnection(to port: UInt16, from source: String) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        func address(_ host: String, _ port: UInt16) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            return address
        }
        func call(_ address: sockaddr_in, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            withUnsafePointer(to: address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        try #require(call(address(source, 0)) { bind(descriptor, $0, $1) } == 0)
        try #require(call(address("127.0.0.1", port)) { connect(descriptor, $0, $1) } == 0)
        return descriptor
    }

    @Test("out of file descriptors, quoted keeps its watchdog and serves the peers already connected")
    func outOfDescriptors() throws {
        let watchdog = try WatchdogListener()
        let daemon = try DaemonProcess(
            environment: ["NOTIFY_SOCKET": watchdog.path, "WATCHDOG_USEC": "2000000"], openFilesLimit: 96)
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        #expect(try client.call(Requests.submit(id: "before"))["ok"] as? Bool == true)
        // Far more TCP connections than quoted has descriptors for, none of them speaking.
        let port = try #require(daemon.commands.split(separator: ":").last.flatMap { UInt16($0) })
        var flood: [Int32] = []
        for _ in 0..<200 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            flood.append(descriptor)
        }
        // Served throughout, until the watchdog has been told twice more (10 s at the most).
        let started = watchdog.count
        let deadline = ContinuousClock.now + .seconds(10)
        var served = 0
        while watchdog.count < started + 2 && ContinuousClock.now < deadline {
            let reply = try client.call(Requests.submit(id: "during-\(served)"))
            #expect(reply["ok"] as? Bool == true, "\(reply)")
            served += 1
        }
        #expect(watchdog.count >= started + 2, "the watchdog was told")
        #expect(watchdog.longestGap < .seconds(2), "WATCHDOG=1 within WATCHDOG_USEC: \(watchdog.longestGap)")
        for descriptor in flood { close(descriptor) }
        // Once the flood is gone, new peers connect again.
        let later = try Client(context, endpoint: daemon.commands)
        #expect(try later.call(Requests.op("ping"))["pong"] as? Bool == true)
    }

    // MARK: Brokers

    @Test("a REQ behind a ROUTER/DEALER proxy is answered, and envelope errors say what came")
    func anyBrokerPath() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let frontend = "inproc://broker-\(UUID().uuidString)"
        let bound = DispatchSemaphore(value: 0)
        let broker = Thread {
            do {
                let router = try Socket(context, type: .router)
                try router.set(.linger, 0)
                try router.bind(frontend)
                let dealer = try Socket(context, type: .dealer)
                try dealer.set(.linger, 0)
                try dealer.connect(daemon.commands)
                bound.signal()
                try? proxy(frontend: router, backend: dealer)
            } catch {
                bound.signal()
            }
        }
        broker.start()
        #expect(bound.wait(timeout: .now() + 10) == .success)
        do {
            let client = try Client(context, endpoint: frontend, type: .req)
            #expect(try client.call(Requests.op("ping"))["pong"] as? Bool == true)
            #expect(try client.call(Requests.submit())["ok"] as? Bool == true)

            let dealer = try Socket(context, type: .dealer)
            try dealer.set(.linger, 0)
            try dealer.set(.receiveTimeout, 20_000)
            try dealer.connect(daemon.commands)
            try dealer.send(multipart: [[], Array("{}".utf8), Array("{}".utf8)])
            let reply = try #require(try dealer.receiveMultipart())
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(reply.frames.last ?? [])) as? [String: Any])
            #expect(body.errorCode == "malformed_envelope")
            #expect((body[object: "error"]?["message"] as? String)?.contains("got 2") == true, "\(body)")
        }
        context.shutdown()
    }

    // MARK: Support

    static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("quoted-hostile-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func writeCatalog(
        _ path: String, currency: String = "USD", services: [(String, Int64)], coupons: [(String, Int)] = []
    ) throws {
        let document: [String: Any] = [
            "currency": currency,
            "services": services.map { ["name": $0.0, "minimumSkill": "junior", "priceCents": $0.1] },
            "mechanics": [["id": 1, "name": "Steve Brimington", "skill": "master"]],
            "coupons": coupons.map { ["code": $0.0, "percentOff": $0.1] },
        ]
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
    }
}

/// systemd's notify socket as a watchdog sees it: records when each `WATCHDOG=1` arrived.
final class WatchdogListener: @unchecked Sendable {
    private let socket: NotifySocket
    private let arrivals = Arrivals()
    private let done = Atomic<Bool>(false)

    final class Arrivals: Sendable {
        let times = Mutex<[ContinuousClock.Instant]>([])
    }

    var path: String { socket.path }

    init() throws {
        let socket = try NotifySocket(path: NSTemporaryDirectory() + "quoted-notify-\(UUID().uuidString.prefix(8))")
        self.socket = socket
        let arrivals = arrivals
        Thread { [weak self] in
            while let self, !self.done.load(ordering: .relaxed) {
                if let message = socket.receive(timeoutMilliseconds: 100), message.contains("WATCHDOG=1") {
                    arrivals.times.withLock { $0.append(.now) }
                }
            }
        }.start()
    }

    var count: Int { arrivals.times.withLock { $0.count } }

    /// The longest time between two `WATCHDOG=1`, or since the last one.
    var longestGap: Duration {
        let times = arrivals.times.withLock { $0 }
        var longest = Duration.zero
        for (earlier, later) in zip(times, times.dropFirst()) { longest = max(longest, later - earlier) }
        if let last = times.last { longest = max(longest, .now - last) }
        return longest
    }

    deinit {
        done.store(true, ordering: .relaxed)
    }
}
