import Foundation
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("quoted end to end: the wait-list", .serialized, .timeLimit(.minutes(3)))
struct WaitListTests {
    /// Twelve Oil Change submissions with book and wait against the built-in ten mechanics.
    static func twelve(_ client: borrowing Client) throws -> [[String: Any]] {
        try (0..<12).map { index in
            var request = Requests.submit(key: "wait-\(index)", book: true, id: index)
            request["wait"] = true
            return try client.call(request)
        }
    }

    @Test(
        "twelve bookings that wait against ten mechanics: ten booked, two in line; a completion books the first in line with the freed mechanic, in one transaction; cancelling the second frees nothing"
    )
    func twelveBookings() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        let replies = try Self.twelve(client)
        #expect(
            replies.map { $0.quote?["state"] as? String } == Array(repeating: "booked", count: 10) + [
                "waiting", "waiting",
            ])
        #expect(replies.suffix(2).map { $0["waitPosition"] as? Int } == [1, 2])
        let waiting = try client.call(Requests.op("waiting"))
        #expect((waiting["quotes"] as? [[String: Any]])?.map { $0["id"] as? Int } == replies.suffix(2).map(\.quoteID))
        let stats = try client.call(Requests.op("stats"))
        #expect((stats[object: "counts"]?["waiting"] as? Int) == 2)
        #expect((stats["oldestWaitMilliseconds"] as? Int).map { $0 >= 0 } == true)

        let last = try #require(stats["lastSeq"] as? Int)
        let holder = replies[4]
        let mechanic = try #require(holder.quote?[object: "mechanic"]?["name"] as? String)
        let completed = try client.call(Requests.op("complete", ["quoteId": holder.quoteID]))
        #expect(completed.quote?["state"] as? String == "completed")
        let first = try client.call(Requests.op("get", ["quoteId": replies[10].quoteID]))
        #expect(first.quote?["state"] as? String == "booked")
        #expect(first.quote?[object: "mechanic"]?["name"] as? String == mechanic)
        let events = try client.call(Requests.op("events", ["since": last]))["events"] as? [[String: Any]] ?? []
        #expect(
            events.map { $0["type"] as? String } == [
                "quote.completed", "mechanic.free", "quote.booked", "mechanic.busy",
            ])
        #expect(
            events.map { $0["quoteId"] as? Int } == [
                holder.quoteID, holder.quoteID, replies[10].quoteID, replies[10].quoteID,
            ])
        #expect(events.map { $0["seq"] as? Int } == Array((last + 1)...(last + 4)))
        // One transaction: the four events carry its one time.
        #expect(Set(events.compactMap { $0["at"] as? String }).count == 1)

        let busyBefore = try client.call(Requests.op("mechanics", ["free": true]))["mechanics"] as? [[String: Any]]
        let cancelled = try client.call(Requests.op("cancel", ["quoteId": replies[11].quoteID]))
        #expect(cancelled.quote?["state"] as? String == "cancelled")
        #expect(cancelled.quote?["cancelledFrom"] as? String == "waiting")
        let busyAfter = try client.call(Requests.op("mechanics", ["free": true]))["mechanics"] as? [[String: Any]]
        #expect(busyBefore?.count == 0 && busyAfter?.count == 0, "cancelling a waiting quote frees no one")
        let after = try client.call(Requests.op("events", ["since": last + 4]))["events"] as? [[String: Any]] ?? []
        #expect(after.map { $0["type"] as? String } == ["quote.cancelled"])
    }

    @Test("killed with quotes in line, quoted restarts with the line as it was and serves it in order")
    func lineSurvivesKill() throws {
        let daemon = try DaemonProcess()
        let context = try Context()
        var booked: [Int] = []
        var line: [Int] = []
        do {
            let client = try Client(context, endpoint: daemon.commands)
            for reply in try Self.twelve(client) {
                if reply.quote?["state"] as? String == "booked" {
                    booked.append(reply.quoteID)
                } else {
                    line.append(reply.quoteID)
                }
            }
            for index in 12..<15 {
                var request = Requests.submit(key: "wait-\(index)", book: true, id: index)
                request["wait"] = true
                line.append(try client.call(request).quoteID)
            }
        }
        #expect(line.count == 5)
        daemon.crash()

        let restarted = try DaemonProcess(stateDirectory: daemon.stateDirectory)
        defer { #expect(restarted.stop() == 0) }
        let client = try Client(context, endpoint: restarted.commands)
        let waiting = try client.call(Requests.op("waiting"))["quotes"] as? [[String: Any]] ?? []
        #expect(waiting.map { $0["id"] as? Int } == line)
        #expect(waiting.allSatisfy { $0["state"] as? String == "waiting" })
        for (index, next) in line.enumerated() {
            _ = try client.call(Requests.op("complete", ["quoteId": booked[index]]))
            let quote = try client.call(Requests.op("get", ["quoteId": next])).quote
            #expect(quote?["state"] as? String == "booked", "quote \(next), number \(index + 1) in line")
            let rest = try client.call(Requests.op("waiting"))["quotes"] as? [[String: Any]] ?? []
            #expect(rest.map { $0["id"] as? Int } == Array(line.dropFirst(index + 1)))
        }
    }

    @Test("quotectl books with --wait, shows the line with `waiting`, and stats say how long the first has waited")
    func quotectlWaits() throws {
        let daemon = try DaemonProcess(arguments: ["--catalog", try Self.oneMechanicCatalog()])
        defer { #expect(daemon.stop() == 0) }
        let env = Quotectl.environment(daemon)
        let watcher = try Watcher(["--json", "--state", "waiting"], environment: env)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()
        let submit = [
            "submit", "--name", "Ann Lee", "--email", "ann@example.com", "--address", "1 Elm St", "--make", "Honda",
            "--model", "Civic", "--year", "2015", "--trim", "EX", "--service", "Oil Change",
        ]
        let first = try Quotectl.run(submit + ["--book", "--wait"], environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("booked"))
        let second = try Quotectl.run(submit + ["--book", "--wait"], environment: env)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("In line for a mechanic: number 1."))
        let ready = try Quotectl.run(submit + ["--json"], environment: env)
        let id = try #require(try ready.json()["quote"] as? [String: Any])["id"] as? Int
        let named = try Quotectl.run(
            ["book", "\(try #require(id))", "--wait", "--mechanic", "Solo Mechanic"], environment: env)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("waiting"))
        #expect(named.stdout.contains("for Solo Mechanic"))
        let refused = try Quotectl.run(submit + ["--wait"], environment: env)
        #expect(refused.status == 64, "--wait without --book is a usage error")

        let line = try Quotectl.run(["waiting"], environment: env)
        #expect(line.status == 0, "\(line.stderr)")
        let rows = line.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 2)
        #expect(rows.first?.hasPrefix("1 ") == true && rows.first?.contains("anyone able") == true)
        #expect(rows.last?.hasPrefix("2 ") == true && rows.last?.contains("Solo Mechanic") == true)
        #expect(watcher.wait { stdout, _ in stdout.count >= 2 }, "watch printed \(watcher.stdout)")
        let waits = try watcher.events()
        #expect(waits.map { $0["type"] as? String } == ["quote.waiting", "quote.waiting"])
        #expect(waits.map { $0["from"] as? String } == ["ready", "ready"])
        let stats = try Quotectl.run(["stats"], environment: env)
        #expect(stats.stdout.contains("oldest waiting for"))
        #expect(stats.stdout.split(separator: "\n").contains { $0.hasPrefix("waiting") && $0.hasSuffix("2") })
    }

    /// A catalog file with the built-in services and one junior mechanic.
    static func oneMechanicCatalog() throws -> String {
        try catalogFile(mechanics: ["Solo Mechanic"])
    }
}

/// A catalog file of one junior service (Oil Change, $35) and `mechanics`, all juniors, with
/// ids from 1 in the order given (their dispatch order when all are free).
func catalogFile(mechanics: [String]) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).yaml").path
    let listed = mechanics.enumerated().map { "  - { id: \($0.offset + 1), name: \($0.element), skill: junior }" }
    let text = """
        currency: USD
        services:
          - { name: Oil Change, minimumSkill: junior, price: "35.00" }
        mechanics:

        """ + listed.joined(separator: "\n") + "\n"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}
