import Foundation
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("quotectl against a real quoted", .serialized, .timeLimit(.minutes(3)))
struct QuotectlTests {
    @Test("John Lee's quote goes through quotectl alone while quotectl watch --json sees every transition in order")
    func johnLeeThroughQuotectl() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let watcher = try Watcher(["--json"], environment: env)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()

        let submitted = try Quotectl.run(
            [
                "submit", "--json", "--name", "John Lee", "--email", "john.lee@example.com", "--address",
                "12 Elm Street", "--make", "Toyota", "--model", "Camry", "--year", "2015", "--service", "Oil Change",
                "--service", "Brake Inspection", "--mechanic", "Joe Murphy",
            ], environment: env)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let quote = try #require(try submitted.json()["quote"] as? [String: Any])
        let id = try #require(quote["id"] as? Int)
        #expect(quote["state"] as? String == "pending")

        let resolved = try Quotectl.run(["resolve", "\(id)", "--trim", "LE", "--price", "66.25"], environment: env)
        #expect(resolved.status == 0, "\(resolved.stderr)")
        #expect(
            resolved.stdout.contains("Your quote is ready. The total for the services you have requested is: $66.25"))

        let booked = try Quotectl.run(["book", "\(id)"], environment: env)
        #expect(booked.status == 0, "\(booked.stderr)")
        #expect(booked.stdout.contains("Your appointment has been booked with Joe Murphy."))

        let completed = try Quotectl.run(["complete", "\(id)"], environment: env)
        #expect(completed.status == 0, "\(completed.stderr)")
        #expect(completed.stdout.contains("Receipt for John Lee"))
        #expect(completed.stdout.split(separator: "\n").contains { $0.hasPrefix("  Total") && $0.hasSuffix("$66.25") })

        let fetched = try Quotectl.run(["get", "\(id)", "--json"], environment: env)
        let history = (try fetched.json()["history"] as? [[String: Any]])?.compactMap { $0["to"] as? String }
        #expect(history == ["submitted", "pending", "ready", "booked", "completed"])

        // Support finds John's quote by his address in any case, or by his name's start.
        for search in ["JOHN.LEE@example.com", "john l"] {
            let found = try Quotectl.run(["list", "--customer", search, "--json"], environment: env)
            #expect(found.status == 0, "\(found.stderr)")
            let quotes = try #require(try found.json()["quotes"] as? [[String: Any]])
            #expect(quotes.compactMap { $0["id"] as? Int } == [id], "\(search)")
        }
        let nobody = try Quotectl.run(["list", "--customer", "jon.lee@example.com", "--json"], environment: env)
        #expect((try nobody.json()["quotes"] as? [[String: Any]])?.isEmpty == true)

        let expected = [
            "quote.submitted", "quote.pending", "quote.ready", "quote.booked", "mechanic.busy", "quote.completed",
            "mechanic.free",
        ]
        let arrived = watcher.wait { stdout, _ in stdout.count >= expected.count }
        #expect(arrived, "watch printed \(watcher.stdout) and said \(watcher.stderr)")
        let events = try watcher.events()
        #expect(events.map { $0["type"] as? String } == expected)
        #expect(events.map { $0["seq"] as? Int } == Array(1...expected.count))
        #expect(events.allSatisfy { $0["quoteId"] as? Int == id })
        let booking = try #require(events.first { $0["type"] as? String == "quote.booked" })
        #expect((booking["quote"] as? [String: Any])?["priceCents"] as? Int == 6_625)
    }

    @Test("A watcher that falls behind fills every gap from the log and prints each seq exactly once")
    func gapsAreFilled() throws {
        // Small queues on both sides let libzmq drop events while the watcher is stopped; kernel
        // buffers may still absorb them, so the watcher also discards every 7th live event on
        // purpose (fault injection), which makes gaps certain.
        let daemon = try DaemonProcess(environment: ["QUOTED_HIGH_WATER_MARK": "10"])
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let watcher = try Watcher(
            [
                "--json", "--receive-hwm", "1", "--receive-buffer", "4096", "--idle-check-ms", "200",
                "--debug-drop-every", "7",
            ], environment: env)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()

        kill(watcher.process.processIdentifier, SIGSTOP)
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let quotes = 1_500
        // One at a time: the daemon's queues are as small as its events queue here.
        for index in 0..<quotes {
            #expect(try client.call(Requests.submit(services: ["Oil Change"], id: index))["ok"] as? Bool == true)
        }
        let lastSeq = try #require(try client.call(Requests.op("ping"))["lastSeq"] as? Int)
        #expect(lastSeq == quotes * 2, "each auto-priced submit is two events")
        kill(watcher.process.processIdentifier, SIGCONT)

        let caughtUp = watcher.wait(timeout: .seconds(120)) { stdout, _ in stdout.count >= lastSeq }
        #expect(caughtUp, "watch printed \(watcher.stdout.count) of \(lastSeq) events")
        let seqs = try watcher.events().compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...lastSeq), "every seq once, in order")
        #expect(
            watcher.stderr.contains { $0.contains("replaying") },
            "events were dropped live and replayed: \(watcher.stderr)")
    }

    @Test("watch --since 0 after the fact prints the whole history, then follows live")
    func sinceZeroPrintsHistory() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let id = try client.call(Requests.submit(services: ["Oil Change"])).quoteID
        #expect(try client.call(Requests.op("book", ["quoteId": id]))["ok"] as? Bool == true)
        #expect(try client.call(Requests.op("cancel", ["quoteId": id]))["ok"] as? Bool == true)
        let history = [
            "quote.submitted", "quote.ready", "quote.booked", "mechanic.busy", "quote.cancelled", "mechanic.free",
        ]

        let watcher = try Watcher(["--json", "--since", "0"], environment: env)
        defer { watcher.stop() }
        #expect(watcher.wait { stdout, _ in stdout.count >= history.count })
        #expect(try watcher.events().map { $0["type"] as? String } == history)

        let second = try client.call(Requests.submit(services: ["Oil Change"])).quoteID
        #expect(watcher.wait { stdout, _ in stdout.count >= history.count + 2 })
        let events = try watcher.events()
        #expect(events.map { $0["seq"] as? Int } == Array(1...history.count + 2), "no hole or repeat at the seam")
        #expect(events.suffix(2).allSatisfy { $0["quoteId"] as? Int == second })
    }

    @Test("Support takes Steve off duty, moves his quote to the next junior and brings him back, through quotectl")
    func dutyAndReassignThroughQuotectl() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let booked = try client.call(Requests.submit(book: true))
        #expect(booked.quote?[object: "mechanic"]?["name"] as? String == "Steve Brimington")

        let off = try Quotectl.run(["mechanic", "off", "Steve Brimington"], environment: env)
        #expect(off.status == 0 && off.stdout.contains("Steve Brimington is off duty"), "\(off.stdout)\(off.stderr)")
        let moved = try Quotectl.run(["reassign", "\(booked.quoteID)"], environment: env)
        #expect(moved.status == 0 && moved.stdout.contains("Mike Fulton"), "\(moved.stdout)\(moved.stderr)")
        let roster = try Quotectl.run(["mechanics"], environment: env)
        let steve = roster.stdout.split(separator: "\n").first { $0.contains("Steve Brimington") } ?? ""
        #expect(steve.split(separator: " ").contains("off"), "\(roster.stdout)")
        let back = try Quotectl.run(["mechanic", "on", "Steve Brimington"], environment: env)
        #expect(back.status == 0 && back.stdout.contains("Steve Brimington is on duty"), "\(back.stdout)")
        let unknown = try Quotectl.run(["mechanic", "off", "Nobody"], environment: env)
        #expect(unknown.status == 1 && unknown.stderr.contains("unknown_mechanic"), "\(unknown.stderr)")

        let watched = try Quotectl.run(["watch", "--since", "0", "--count", "9"], environment: env)
        let lines = watched.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("mechanic.off_duty") && $0.contains("Steve Brimington") }, "\(lines)")
        #expect(lines.contains { $0.contains("reassigned Steve Brimington -> Mike Fulton") }, "\(lines)")
        #expect(lines.contains { $0.contains("mechanic.on_duty") }, "\(lines)")
    }

    @Test(
        "An operator changes the roster and applies a catalog file through quotectl: a dry run first, problems listed, the version shown"
    )
    func rosterAndCatalogThroughQuotectl() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let added = try Quotectl.run(["mechanic", "add", "Nia Quill", "--skill", "master"], environment: env)
        #expect(
            added.status == 0 && added.stdout.contains("Nia Quill (#11, master) added"),
            "\(added.stdout)\(added.stderr)")
        let again = try Quotectl.run(["mechanic", "add", "nia quill", "--skill", "junior"], environment: env)
        #expect(again.status == 1 && again.stderr.contains("duplicate_mechanic"), "\(again.stderr)")
        let updated = try Quotectl.run(["mechanic", "update", "Nia Quill", "--skill", "junior"], environment: env)
        #expect(updated.status == 0 && updated.stdout.contains("(#11, junior) updated"), "\(updated.stdout)")
        let retired = try Quotectl.run(["mechanic", "retire", "Steve Brimington"], environment: env)
        #expect(retired.status == 0 && retired.stdout.contains("Steve Brimington (#1, junior) retired"))

        let shown = try Quotectl.run(["catalog", "show"], environment: env)
        #expect(shown.stdout.contains("catalog version 4, in USD"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Nia Quill") && !shown.stdout.contains("Steve Brimington"))

        // The built-in file: a dry run lists what it would change, and changes nothing.
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/catalog.yaml").path
        let dry = try Quotectl.run(["catalog", "apply", "--dry-run", file], environment: env)
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("+ mechanic #1 Steve Brimington (junior)"), "\(dry.stdout)")
        #expect(dry.stdout.contains("- mechanic #11 Nia Quill (junior)"), "\(dry.stdout)")
        #expect(try Quotectl.run(["catalog", "show"], environment: env).stdout.contains("catalog version 4"))
        let applied = try Quotectl.run(["catalog", "apply", file], environment: env)
        #expect(applied.status == 0 && applied.stdout.contains("catalog version 5 in force"), "\(applied.stdout)")
        let same = try Quotectl.run(["catalog", "apply", file], environment: env)
        #expect(same.stdout.contains("no difference") && same.stdout.contains("catalog version 5 in force"))

        // A file with problems: every one listed, nothing sent.
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: broken) }
        try """
        services:
          - { name: Oil Change, minimumSkill: wizard, price: "35.00" }
        mechanics:
          - { id: 1, name: Steve Brimington, skill: junior }
          - { id: 1, name: steve brimington, skill: junior }
        """.write(to: broken, atomically: true, encoding: .utf8)
        let refused = try Quotectl.run(["catalog", "apply", broken.path], environment: env)
        #expect(refused.status == 1, "\(refused.stderr)")
        for field in ["services[0].minimumSkill", "mechanics[1].name", "mechanics[1].id"] {
            #expect(refused.stderr.contains(field), "\(field): \(refused.stderr)")
        }
        let watched = try Quotectl.run(
            ["watch", "--since", "0", "--type", "mechanic", "--count", "6"], environment: env)
        let lines = watched.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("mechanic.updated") && $0.contains("master -> junior") }, "\(lines)")
        #expect(lines.contains { $0.contains("catalog.applied") && $0.contains("version 5") }, "\(lines)")
    }

    @Test("Human watch lines show time, seq, quote, transition, price, mechanic and message; filters apply")
    func humanWatchLines() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let watcher = try Watcher(["--state", "booked", "--count", "1"], environment: env)
        try watcher.waitUntilFollowing()
        let submitted = try Quotectl.run(
            [
                "submit", "--json", "--name", "Reza", "--email", "reza@example.com", "--address", "1 Main St",
                "--make", "Honda", "--model", "Civic", "--year", "2016", "--trim", "EX", "--service", "Oil Change",
                "--book",
            ], environment: env)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        try #require(watcher.process.waitUntilExit(within: .seconds(60)), "quotectl watch --count 1 ended")
        #expect(watcher.process.terminationStatus == 0, "--count 1 exits after one event")
        let line = try #require(watcher.stdout.first)
        #expect(watcher.stdout.count == 1, "only the booked event passes --state booked")
        #expect(line.contains("#3"))
        #expect(line.contains("ready -> booked"))
        #expect(line.contains("$35.00"))
        #expect(line.contains("Your appointment has been booked with"))
        #expect(!line.contains("\u{1B}["), "no colour when stdout is not a terminal")
    }

    @Test("Refusals exit 1 and list every problem the daemon returned")
    func refusals() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let invalid = try Quotectl.run(["submit", "--name", "Nobody", "--service", "Oil Change"], environment: env)
        #expect(invalid.status == 1)
        #expect(invalid.stderr.contains("customer.email"))
        #expect(invalid.stderr.contains("customer.address"))
        #expect(invalid.stderr.contains("car"))
        #expect(invalid.stdout.isEmpty)

        let file = """
            {"customer":{"name":"A","email":"a@example.com","address":"1 Road"},
             "car":{"make":"Honda","model":"Civic","year":2016,"trim":"EX"},"services":["Oil Change"]}
            """
        let ready = try Quotectl.run(["submit", "-f", "-", "--json"], environment: env, stdin: file)
        #expect(ready.status == 0, "\(ready.stderr)")
        let id = try #require((try ready.json()["quote"] as? [String: Any])?["id"] as? Int)
        let illegal = try Quotectl.run(["complete", "\(id)"], environment: env)
        #expect(illegal.status == 1)
        #expect(illegal.stderr.contains("ready"))

        let unknown = try Quotectl.run(["get", "999999"], environment: env)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown_quote"))
    }

    @Test("The same idempotency key twice creates one quote")
    func idempotentSubmit() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let arguments = [
            "submit", "--json", "--idempotency-key", "retry-1", "--name", "A", "--email", "a@example.com",
            "--address", "1 Road", "--make", "Honda", "--model", "Civic", "--service", "Oil Change",
        ]
        let first = try Quotectl.run(arguments, environment: env)
        let second = try Quotectl.run(arguments, environment: env)
        #expect(first.status == 0 && second.status == 0)
        let firstID = (try first.json()["quote"] as? [String: Any])?["id"] as? Int
        #expect(firstID != nil)
        #expect((try second.json()["quote"] as? [String: Any])?["id"] as? Int == firstID)
        #expect(try second.json()["replayed"] as? Bool == true)
        let stats = try Quotectl.run(["stats", "--json"], environment: env)
        #expect((try stats.json()["counts"] as? [String: Int])?["pending"] == 1)
    }

    @Test("Usage errors exit 64", arguments: [["list", "--state", "bogus"], ["get", "seven"], ["frobnicate"]])
    func usageErrors(arguments: [String]) throws {
        let result = try Quotectl.run(arguments, environment: ["QUOTED_ENDPOINT": "tcp://127.0.0.1:1"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(!result.stderr.isEmpty)
    }

    @Test("An unreachable daemon exits 69 within the timeout, naming the endpoint")
    func unreachable() throws {
        // A port nobody listens on, held for the test: bound without listening, so connections
        // to it are refused and no other test's socket can take it meanwhile.
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(held, $0, length) == 0 && getsockname(held, $0, &length) == 0
            }
        }
        try #require(bound, "a port to hold")
        let endpoint = "tcp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))"
        let clock = ContinuousClock()
        let start = clock.now
        let result = try Quotectl.run(["ping", "--endpoint", endpoint, "--timeout", "1"])
        let elapsed = clock.now - start
        #expect(result.status == 69)
        #expect(result.stderr.contains(endpoint))
        #expect(result.stderr.contains("is quoted running?"))
        #expect(elapsed < .seconds(10), "gives up after --timeout, not never")
    }
}

@Suite("quotectl watch across a daemon restart", .serialized, .timeLimit(.minutes(3)))
struct QuotectlReconnectTests {
    @Test("watch says when it loses and regains quoted, and misses nothing published meanwhile")
    func reconnects() throws {
        var daemon = try DaemonProcess()
        let env = Quotectl.environment(daemon)
        let watcher = try Watcher(["--json", "--idle-check-ms", "200"], environment: env)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()
        let context = try Context()
        do {
            let client = try Client(context, endpoint: daemon.commands)
            _ = try client.call(Requests.submit(services: ["Oil Change"]))
        }
        #expect(watcher.wait { stdout, _ in stdout.count >= 2 })
        #expect(daemon.stop() == 0)
        #expect(watcher.wait { _, stderr in stderr.contains { $0.contains("lost") } }, "\(watcher.stderr)")

        daemon = try DaemonProcess(
            stateDirectory: daemon.stateDirectory, endpoint: daemon.commands, eventsEndpoint: daemon.events)
        defer { #expect(daemon.stop() == 0) }
        do {
            let client = try Client(context, endpoint: daemon.commands)
            _ = try client.call(Requests.submit(services: ["Oil Change"]))
        }
        #expect(watcher.wait { stdout, _ in stdout.count >= 4 }, "\(watcher.stdout) \(watcher.stderr)")
        #expect(watcher.wait { _, stderr in stderr.contains { $0.contains("reconnected") } }, "\(watcher.stderr)")
        #expect(try watcher.events().map { $0["seq"] as? Int } == [1, 2, 3, 4])
    }
}

@Suite("quotectl's generated shell completions")
struct QuotectlCompletionTests {
    @Test(
        "The completion script for each shell names every command and watch's options",
        arguments: ["bash", "zsh", "fish"])
    func completionScript(shell: String) throws {
        let result = try Quotectl.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        for word in [
            "submit", "get", "list", "resolve", "book", "complete", "cancel", "mechanics", "services", "stats", "ping",
            "watch", "since", "reassign", "mechanic", "retire", "catalog", "apply", "dry-run",
        ] {
            #expect(result.stdout.contains(word), "\(shell) completion lacks \(word)")
        }
    }

    @Test("The bash completion script is valid bash")
    func bashSyntax() throws {
        let script = try Quotectl.run(["--generate-completion-script", "bash"]).stdout
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("quotectl-\(UUID().uuidString).bash")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let bash = Process()
        bash.executableURL = URL(fileURLWithPath: "/bin/bash")
        bash.arguments = ["-n", file.path]
        try bash.spawn()
        try #require(bash.waitUntilExit(within: .seconds(60)))
        #expect(bash.terminationStatus == 0)
    }
}
