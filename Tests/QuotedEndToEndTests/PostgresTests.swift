import Foundation
import TestSupport
import Testing
import ZeroMQ

@Suite("Several daemons on one PostgreSQL database", .serialized)
struct PostgresTests {
    @Test("two daemons share quotes, mechanics and one log: a quote submitted on one is completed on the other")
    func twoDaemonsShareOneDatabase() throws {
        // The cluster trusts loopback: a password is accepted, and must never be logged.
        let url = try PostgresCluster.start().createDatabase().replacingOccurrences(
            of: "postgres@", with: "postgres:s3cret@")
        let first = try DaemonProcess(arguments: ["--postgres", url])
        defer { first.stop() }
        let second = try DaemonProcess(environment: ["QUOTED_POSTGRES_URL": url])
        defer { second.stop() }
        #expect(first.log.contains { $0.contains("store open") && $0.contains("store=postgresql") })
        #expect(!first.log.joined().contains("s3cret"), "no password in the log")
        #expect(!first.log.joined().contains("hasn't been called yet"), "\(first.log)")

        let context = try Context()
        let one = try Client(context, endpoint: first.commands)
        let other = try Client(context, endpoint: second.commands)
        let booked = try one.call(Requests.submit(book: true))
        let id = booked.quoteID
        #expect(booked.quote?["state"] as? String == "booked")
        #expect(try other.call(Requests.op("get", ["quoteId": id])).quote?["state"] as? String == "booked")
        let completed = try other.call(Requests.op("complete", ["quoteId": id]))
        #expect(completed.quote?["state"] as? String == "completed", "\(completed)")
        let mechanic = try #require(booked.quote?[object: "mechanic"]?["name"] as? String)
        let roster = try #require(try one.call(Requests.op("mechanics"))["mechanics"] as? [[String: Any]])
        #expect(roster.first { $0["name"] as? String == mechanic }?["busy"] as? Bool == false)

        let fromFirst = try #require(try one.call(Requests.op("events", ["since": 0]))["events"] as? [[String: Any]])
        let fromSecond = try #require(
            try other.call(Requests.op("events", ["since": 0]))["events"] as? [[String: Any]])
        #expect(fromFirst.map { $0["seq"] as? Int } == Array(1...fromFirst.count).map { Optional($0) })
        #expect(fromFirst.map { $0["type"] as? String } == fromSecond.map { $0["type"] as? String })
        #expect(
            fromFirst.map { $0["type"] as? String } == [
                "quote.submitted", "quote.ready", "quote.booked", "mechanic.busy", "quote.completed", "mechanic.free",
            ])

        // Duty is shared too: off duty through one, never booked through the other; a quote
        // booked through the other is reassigned through the first.
        let off = try one.call(Requests.op("setDuty", ["mechanic": mechanic, "onDuty": false]))
        #expect(off["onDuty"] as? Bool == false, "\(off)")
        let next = try other.call(Requests.submit(book: true))
        let taken = try #require(next.quote?[object: "mechanic"]?["name"] as? String)
        #expect(taken != mechanic, "\(mechanic) is off duty")
        let moved = try one.call(Requests.op("reassign", ["quoteId": next.quoteID]))
        let now = try #require(moved.quote?[object: "mechanic"]?["name"] as? String, "\(moved)")
        #expect(now != taken && now != mechanic)
        let seen = try other.call(Requests.op("mechanics"))["mechanics"] as? [[String: Any]] ?? []
        #expect(seen.first { $0["name"] as? String == mechanic }?["onDuty"] as? Bool == false)
        #expect(seen.first { $0["name"] as? String == now }?["quoteId"] as? Int == next.quoteID)

        // SIGTERM: the daemon's services drain, then its pool ends, and it exits cleanly.
        #expect(first.stop() == 0)
        #expect(first.waitForLog { $0.contains { $0.contains("quoted stopped") } }, "\(first.log.suffix(10))")
    }

    @Test(
        "SIGTERM while start-up waits for another daemon's migration lock stops the daemon at once; it never serves",
        .timeLimit(.minutes(3)))
    func stopDuringStartUp() throws {
        let cluster = try PostgresCluster.start()
        let url = try cluster.createDatabase()
        let database = String(url.split(separator: "/").last ?? "")
        func advisoryLocks(granted: Bool) throws -> String {
            try cluster.sql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted = \(granted)", database: database
            )
        }
        // Another session holds the migration lock, as a daemon migrating would.
        let holder = try cluster.session(
            "SELECT pg_advisory_lock(7305173021); SELECT pg_sleep(300)", database: database)
        defer { holder.terminate() }
        while try advisoryLocks(granted: true) != "1" {}

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString)").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted"))
        process.arguments = [
            "--postgres", url, "--state-dir", directory, "--endpoint", "tcp://127.0.0.1:0", "--events",
            "tcp://127.0.0.1:0",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.spawn()
        // Start-up waits for the lock.
        while process.isRunning, try advisoryLocks(granted: false) != "1" {}
        #expect(process.isRunning, "quoted ended before it waited for the lock")
        kill(process.processIdentifier, SIGTERM)
        let exited = process.waitUntilExit(within: .seconds(60))
        #expect(exited, "quoted went on waiting after SIGTERM")
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(log.contains("stopped during start-up"), "\(log)")
        #expect(!log.contains("quoted ready"), "\(log)")
    }

    @Test("clients connected to both daemons race bookings for few mechanics: no mechanic is ever booked twice")
    func racingDaemonsNeverDoubleBook() throws {
        let url = try PostgresCluster.start().createDatabase()
        let daemons = try (0..<2).map { _ in try DaemonProcess(arguments: ["--postgres", url]) }
        defer { for daemon in daemons { daemon.stop() } }
        let context = try Context()
        // Each DEALER is connected to both daemons: ZeroMQ spreads its requests over them.
        let clients = try (0..<8).map { _ in
            let socket = try Socket(context, type: .dealer)
            try socket.set(.linger, 0)
            try socket.set(.receiveTimeout, 20_000)
            for daemon in daemons { try socket.connect(daemon.commands) }
            return Box(socket)
        }
        var booked = 0
        var refused = 0
        for round in 0..<15 {
            for (index, client) in clients.enumerated() {
                let request = Requests.submit(key: "race-\(round)-\(index)", book: true)
                try client.socket.send(multipart: [[], Array(try JSONSerialization.data(withJSONObject: request))])
            }
            for client in clients {
                let body = try #require(try client.socket.receiveMultipart()?.frames.last)
                let reply = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
                #expect(reply["ok"] as? Bool == true, "\(reply)")
                if reply.quote?["state"] as? String == "booked" {
                    booked += 1
                    let id = reply.quoteID
                    try client.socket.send(
                        multipart: [
                            [],
                            Array(try JSONSerialization.data(withJSONObject: Requests.op("complete", ["quoteId": id]))),
                        ])
                    let done = try #require(try client.socket.receiveMultipart()?.frames.last)
                    #expect(String(decoding: done, as: UTF8.self).contains(#""ok":true"#))
                } else {
                    refused += 1
                }
            }
        }
        #expect(booked > 0)

        // The one log, read through either daemon: gap-free, and no mechanic claimed while held.
        let reader = try Client(context, endpoint: daemons[1].commands)
        let events = try allEvents(reader)
        #expect(events.map { $0["seq"] as? Int ?? -1 } == Array(1...events.count))
        var holder: [Int: Int] = [:]
        for event in events {
            guard let mechanic = (event["mechanic"] as? [String: Any])?["id"] as? Int else { continue }
            let quote = event["quoteId"] as? Int ?? -1
            if event["type"] as? String == "mechanic.busy" {
                #expect(
                    holder[mechanic] == nil,
                    "mechanic \(mechanic) booked by \(quote) while held by \(holder[mechanic]!)")
                holder[mechanic] = quote
            } else {
                #expect(holder[mechanic] == quote, "mechanic \(mechanic) freed by \(quote), not its holder")
                holder[mechanic] = nil
            }
        }
        #expect(holder.isEmpty, "every booking was completed")
        #expect(events.filter { $0["type"] as? String == "mechanic.busy" }.count == booked)
    }
}

extension PostgresTests {
    @Test("quotectl given both daemons' endpoints acts through them, and watch sees every commit of both in seq order")
    func quotectlOverTwoDaemons() throws {
        let url = try PostgresCluster.start().createDatabase()
        let daemons = try (0..<2).map { _ in try DaemonProcess(arguments: ["--postgres", url]) }
        defer { for daemon in daemons { daemon.stop() } }
        let environment = [
            "QUOTED_ENDPOINT": daemons.map(\.commands).joined(separator: ","),
            "QUOTED_EVENTS": daemons.map(\.events).joined(separator: ","),
        ]
        let watcher = try Watcher(["--json"], environment: environment)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()

        // Commits on each daemon, each publishing only its own.
        let context = try Context()
        for daemon in daemons {
            let client = try Client(context, endpoint: daemon.commands)
            for _ in 0..<3 { #expect(try client.call(Requests.submit(book: true))["ok"] as? Bool == true) }
        }
        let stats = try Quotectl.run(["stats", "--json"], environment: environment)
        #expect(stats.status == 0, "\(stats.stderr)")
        let last = try #require(try stats.json()["lastSeq"] as? Int)
        #expect(last == 6 * 4, "submitted, ready, booked, mechanic.busy for each")
        #expect(
            watcher.wait { stdout, _ in stdout.count >= last },
            "watch printed \(watcher.stdout), said \(watcher.stderr)")
        #expect(try watcher.events().map { $0["seq"] as? Int } == Array(1...last).map { Optional($0) })
    }
}

extension PostgresTests {
    @Test(
        "on a shared store, a subscriber that comes to a daemon that published to no one hears every commit of both daemons from its first on, as logged"
    )
    func subscribersComeAndGoOnASharedStore() throws {
        let url = try PostgresCluster.start().createDatabase()
        let daemons = try (0..<2).map { _ in try DaemonProcess(arguments: ["--postgres", url]) }
        defer { for daemon in daemons { daemon.stop() } }
        let context = try Context()
        let one = try Client(context, endpoint: daemons[0].commands)
        let other = try Client(context, endpoint: daemons[1].commands)
        var made = 0
        // Commits through both daemons at once, in bursts: the second's own events wait for
        // the first's, read from the log, and its reads of the first's are on their way, as a
        // subscriber comes.
        func change() throws {
            for _ in 0..<8 {
                made += 1
                let request = Requests.submit(key: "change-\(made)", book: made % 3 == 0)
                try made % 2 == 0 ? one.send(request) : other.send(request)
            }
            for _ in 0..<4 {
                #expect(try one.receive()["ok"] as? Bool == true)
                #expect(try other.receive()["ok"] as? Bool == true)
            }
        }
        for round in 0..<3 {
            try change()
            let subscriber = try Subscriber(context, endpoint: daemons[1].events, topics: ["quote.", "mechanic."])
            let heard = try subscriber.hear(through: other, more: 3) { try change() }
            #expect(try heardAsLogged(heard, other), "round \(round): \(heard.compactMap { $0["seq"] as? Int })")
        }
    }
}

/// A socket kept in an array.
final class Box {
    let socket: Socket
    init(_ socket: consuming Socket) { self.socket = socket }
}

extension PostgresTests {
    @Test(
        "two daemons share the roster live: a mechanic added through one is booked through the other at once, and a catalog applied on one is in force on both with no warning"
    )
    func rosterIsSharedLive() throws {
        let url = try PostgresCluster.start().createDatabase()
        let first = try DaemonProcess(arguments: ["--postgres", url])
        defer { first.stop() }
        // The built-in catalog with Oil Change at $40 instead of $35.
        let deploy = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/catalog.yaml")
        let text = try String(contentsOf: deploy, encoding: .utf8)
        #expect(text.contains(#"price: "35.00""#))
        let changed = FileManager.default.temporaryDirectory.appendingPathComponent("dear-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: changed) }
        try text.replacingOccurrences(of: #"price: "35.00""#, with: #"price: "40.00""#)
            .write(to: changed, atomically: true, encoding: .utf8)
        // Started on another file, the second daemon says so and uses the store's catalog.
        let second = try DaemonProcess(arguments: ["--postgres", url, "--catalog", changed.path])
        defer { second.stop() }
        #expect(second.log.contains { $0.contains("differs from the store's catalog") }, "\(second.log)")
        let context = try Context()
        let one = try Client(context, endpoint: first.commands)
        let other = try Client(context, endpoint: second.commands)
        func oilChange(_ client: borrowing Client) throws -> Int? {
            let services = try client.call(Requests.op("services"))["services"] as? [[String: Any]] ?? []
            return services.first { $0["name"] as? String == "Oil Change" }?["priceCents"] as? Int
        }
        #expect(try oilChange(other) == 3_500)

        // Added through one, booked by name through the other in the very next request.
        let added = try one.call(Requests.op("addMechanic", ["name": "Nia Quill", "skill": "master"]))
        #expect(added[object: "mechanic"]?["name"] as? String == "Nia Quill", "\(added)")
        let ready = try other.call(Requests.submit())
        let booked = try other.call(Requests.op("book", ["quoteId": ready.quoteID, "mechanic": "Nia Quill"]))
        #expect(booked.quote?[object: "mechanic"]?["name"] as? String == "Nia Quill", "\(booked)")
        // Retired through the other: never booked again through the first.
        let retired = try other.call(Requests.op("retireMechanic", ["mechanic": "Zane Marine"]))
        #expect(retired["ok"] as? Bool == true, "\(retired)")
        let refused = try one.call(
            Requests.op("book", ["quoteId": try one.call(Requests.submit()).quoteID, "mechanic": "Zane Marine"]))
        #expect(refused.errorCode == "unknown_mechanic", "\(refused)")

        // `catalog apply` through the first: in force on both, at the same version.
        let applied = try Quotectl.run(["catalog", "apply", changed.path], environment: Quotectl.environment(first))
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(applied.stdout.contains("~ service Oil Change"), "\(applied.stdout)")
        // Nia Quill was not in the file: she is retired with it.
        #expect(applied.stdout.contains("- mechanic"), "\(applied.stdout)")
        let versions = (
            try one.call(Requests.op("catalog"))["catalogVersion"] as? Int,
            try other.call(Requests.op("catalog"))["catalogVersion"] as? Int
        )
        #expect(versions.0 != nil && versions.0 == versions.1, "\(versions)")
        #expect(try oilChange(one) == 4_000)
        // The other daemon follows the log: it prices with the new catalog as soon as it read it.
        let deadline = ContinuousClock.now + .seconds(10)
        while try oilChange(other) != 4_000, ContinuousClock.now < deadline {}
        #expect(try oilChange(other) == 4_000)
        let priced = try other.call(Requests.submit(services: ["Oil Change"]))
        #expect(priced.quote?["priceCents"] as? Int == 4_000, "\(priced)")
        let again = try Quotectl.run(
            ["catalog", "apply", "--dry-run", changed.path], environment: Quotectl.environment(second))
        #expect(again.stdout.contains("no difference"), "\(again.stdout)")
        for daemon in [first, second] {
            let warnings = daemon.log.filter {
                ($0.hasPrefix("<4>") || $0.hasPrefix("<3>")) && !$0.contains("differs from")
            }
            #expect(warnings.isEmpty, "\(warnings)")
        }
    }
}
