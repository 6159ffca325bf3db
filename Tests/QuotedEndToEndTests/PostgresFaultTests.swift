import Foundation
import Synchronization
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// Faults of a several-daemon deployment: a daemon crashing under load, the database
/// restarting under load. The load is real clients on real sockets; every check is made
/// afterwards, on what the database and the subscribers hold.
@Suite("Several daemons on PostgreSQL survive crashes and a database restart", .serialized)
struct PostgresFaultTests {
    @Test(
        "three daemons, 64 clients on all three, one daemon killed -9 three times: nothing acknowledged lost, no double booking, one gap-free sequence, every survivor's subscriber saw it all in order"
    )
    func crashesUnderLoad() throws {
        let url = try PostgresCluster.start().createDatabase()
        var daemons = try (0..<3).map { _ in try DaemonProcess(arguments: ["--postgres", url]) }
        defer { for daemon in daemons { daemon.stop() } }
        let commands = daemons.map(\.commands)
        let subscribers = try daemons.map { try LiveRecorder(endpoint: $0.events) }
        defer { for subscriber in subscribers { subscriber.stop() } }

        let deadline = ContinuousClock.now + .seconds(30)
        let clients = (0..<64).map { LoadClient(index: $0, endpoints: commands, until: deadline) }
        for client in clients { client.start() }
        // The crashes: the first daemon, at about 5, 13 and 21 seconds, each time started again
        // on the same ports, where the clients' sockets reconnect by themselves.
        for at in [5, 13, 21] {
            waitUntil(deadline - .seconds(30 - at))
            daemons[0].crash()
            daemons[0] = try DaemonProcess(
                arguments: ["--postgres", url], endpoint: daemons[0].commands, eventsEndpoint: daemons[0].events)
        }
        for client in clients { client.join() }
        let results = clients.map(\.result)
        let acknowledged = results.flatMap(\.submitted)
        let completed = results.flatMap(\.completed)
        #expect(acknowledged.count > 500, "the load ran: \(acknowledged.count) submissions acknowledged")
        #expect(completed.count > 50, "bookings were completed: \(completed.count)")
        #expect(results.allSatisfy { $0.lost.isEmpty }, "\(results.flatMap(\.lost).prefix(5))")

        // The log, read through a survivor, holds every acknowledged write; each survivor's
        // subscriber saw it in order, nearly all of it live.
        let context = try Context()
        let last = try Self.checkLog(through: Client(context, endpoint: daemons[1].commands), holds: results)
        for (index, subscriber) in subscribers.enumerated().dropFirst() {
            let seqs = try Self.check(subscriber, index: index, upTo: last, filledFrom: daemons[index], context)
            #expect(
                seqs.count >= last * 9 / 10,
                "subscriber \(index) received \(seqs.count) of \(last) live (the rest filled by events)")
        }
    }

    @Test(
        "PostgreSQL restarted under load: requests get storage_error while it is down, quoted reconnects by itself, nothing acknowledged is lost"
    )
    func databaseRestartUnderLoad() throws {
        let cluster = try PostgresCluster.startPrivate()
        let url = try cluster.createDatabase()
        let daemons = try (0..<2).map { _ in try DaemonProcess(arguments: ["--postgres", url]) }
        defer { for daemon in daemons { daemon.stop() } }
        let commands = daemons.map(\.commands)
        let context = try Context()
        let probe = try Client(context, endpoint: commands[0])
        #expect(try probe.call(Requests.op("ping"))["store"] as? String == "up")

        let progress = DispatchSemaphore(value: 0)
        let clients = (0..<8).map {
            LoadClient(
                index: $0, endpoints: commands, until: .now + .seconds(3600), tolerateStorageErrors: true,
                progress: progress)
        }
        for client in clients { client.start() }
        #expect(waitFor(progress) { clients.map(\.acknowledgedCount).reduce(0, +) >= 200 }, "load before the restart")

        try cluster.stopServer()
        // While it is down, quoted answers, says why, and applies nothing.
        #expect(
            waitFor(progress) { clients.map(\.storageErrors).reduce(0, +) >= 10 }, "requests refused with storage_error"
        )
        let down = try probe.call(Requests.op("ping"))
        #expect(down["ok"] as? Bool == true)
        #expect(down["store"] as? String == "down", "\(down)")
        #expect((down["storeError"] as? String)?.contains("PostgreSQL") == true, "\(down)")
        let refused = try probe.call(Requests.submit(key: "while-down"))
        #expect((refused["error"] as? [String: Any])?["code"] as? String == "storage_error", "\(refused)")

        try cluster.startServer()
        let before = clients.map(\.acknowledgedCount).reduce(0, +)
        #expect(waitFor(progress) { clients.map(\.acknowledgedCount).reduce(0, +) >= before + 200 }, "service resumed")
        #expect(try probe.call(Requests.op("ping"))["store"] as? String == "up")
        for client in clients { client.finish() }
        for client in clients { client.join() }

        let results = clients.map(\.result)
        #expect(results.allSatisfy { $0.lost.isEmpty }, "\(results.flatMap(\.lost).prefix(5))")
        let log = try Self.events(probe)
        let last = try #require(log.last?["seq"] as? Int)
        #expect(log.map { $0["seq"] as? Int ?? -1 } == Array(1...last), "the sequence is gap-free")
        let inLog = Set(log.compactMap { $0["quoteId"] as? Int })
        let acknowledged = results.flatMap(\.submitted)
        #expect(acknowledged.allSatisfy(inLog.contains), "every acknowledged submission is in the log")
        #expect(Self.doubleBookings(log).isEmpty)
        #expect(try probe.call(Requests.op("get", ["quoteId": 999_999]))["ok"] as? Bool == false)
        #expect(
            try probe.call(Requests.submit(key: "while-down"))["ok"] as? Bool == true, "the refused one applied nothing"
        )
    }

    @Test(
        "the primary killed -9 under load and its synchronous standby promoted: three daemons on a two-host URL fail over by themselves, nothing acknowledged is lost, no mechanic is booked twice, the sequence is gap-free and every subscriber saw it all in order"
    )
    func failoverToSynchronousStandby() throws {
        let (primary, standby) = try PostgresCluster.startReplicated()
        let name = try #require(try primary.createDatabase().split(separator: "/").last)
        let url =
            "postgresql://postgres@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(name)"
            + "?target_session_attrs=read-write"
        let metricsPort = try freePort()
        let daemons = try (0..<3).map { index in
            try DaemonProcess(
                arguments: ["--postgres", url] + (index == 0 ? ["--metrics", "127.0.0.1:\(metricsPort)"] : []))
        }
        defer { for daemon in daemons { daemon.stop() } }
        let commands = daemons.map(\.commands)
        let subscribers = try daemons.map { try LiveRecorder(endpoint: $0.events) }
        defer { for subscriber in subscribers { subscriber.stop() } }
        let context = try Context()
        let probe = try Client(context, endpoint: commands[0])

        let progress = DispatchSemaphore(value: 0)
        let clients = (0..<16).map {
            LoadClient(
                index: $0, endpoints: commands, until: .now + .seconds(3600), tolerateStorageErrors: true,
                progress: progress)
        }
        for client in clients { client.start() }
        func acknowledged() -> Int { clients.map(\.acknowledgedCount).reduce(0, +) }
        #expect(waitFor(progress) { acknowledged() >= 300 }, "load before the failover")

        let killed = ContinuousClock.now
        primary.crash()
        // With no primary, every write is refused with storage_error, and ping says why.
        #expect(
            waitFor(progress) { clients.map(\.storageErrors).reduce(0, +) >= 10 }, "requests refused with storage_error"
        )
        let down = try probe.call(Requests.op("ping"))
        #expect(down["store"] as? String == "down", "\(down)")
        let unready = try Scrape(port: metricsPort)
        #expect(unready.readyz == 503, "\(unready.readyzBody)")
        let promoting = ContinuousClock.now
        try standby.promote()
        let atPromotion = acknowledged()
        #expect(waitFor(progress) { acknowledged() > atPromotion }, "a write acknowledged after the promotion")
        let (sinceKill, sincePromotion) = (killed.duration(to: .now), promoting.duration(to: .now))
        #expect(waitFor(progress) { acknowledged() >= atPromotion + 300 }, "service resumed on the new primary")
        for client in clients { client.finish() }
        for client in clients { client.join() }
        FileHandle.standardError.write(
            Data(
                "failover: the first write acknowledged after promotion came \(sinceKill) after the kill,"
                    .appending(" \(sincePromotion) after the promotion began (the test checks the outage between)\n")
                    .utf8))

        let results = clients.map(\.result)
        #expect(results.allSatisfy { $0.lost.isEmpty }, "\(results.flatMap(\.lost).prefix(5))")
        // What the new primary holds, through the daemon that answers first; every daemon's
        // subscriber saw it in order, and what the stream skipped is in the log.
        let last = try Self.checkLog(through: probe, holds: results)
        // Events, not rows: a new quote's priced row stands for its quote.submitted too.
        #expect(
            try standby.sql(
                "SELECT count(*) + count(*) FILTER (WHERE from_state = 'submitted') FROM events",
                database: String(name)) == "\(last)",
            "the promoted standby holds the whole log")
        for (index, subscriber) in subscribers.enumerated() {
            _ = try Self.check(subscriber, index: index, upTo: last, filledFrom: daemons[index], context)
        }
        #expect(try probe.call(Requests.op("ping"))["store"] as? String == "up")
        // The operator's view: one failover, and the time without a primary.
        let scrape = try Scrape(port: metricsPort)
        let failovers = scrape.samples.first { $0.name == "quoted_store_failovers_total" }?.value
        let downSeconds = scrape.samples.first { $0.name == "quoted_store_down_seconds_total" }?.value
        #expect(failovers == 1, "\(scrape.samples.filter { $0.name.hasPrefix("quoted_store") })")
        #expect((downSeconds ?? 0) > 0, "\(scrape.samples.filter { $0.name.hasPrefix("quoted_store") })")
    }

    @Test(
        "a synchronous standby that is down: a write whose wait is cancelled, or outlives the transaction timeout, gets storage_error and is never acknowledged; once the standby is back, its retry gets the quote"
    )
    func standbyDownNeverAcknowledges() throws {
        let (primary, standby) = try PostgresCluster.startReplicated()
        let name = String(try #require(try primary.createDatabase().split(separator: "/").last))
        let url = "postgresql://postgres@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(name)"
        let daemon = try DaemonProcess(
            arguments: ["--postgres", url],
            environment: ["QUOTED_STORE_POSTGRES_TRANSACTION_TIMEOUT_MILLISECONDS": "4000"])
        defer { daemon.stop() }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        #expect(try client.call(Requests.submit(key: "before"))["ok"] as? Bool == true)

        standby.crash()
        // A commit now waits for the standby. Cancelled from outside, PostgreSQL reports it
        // committed (with a WARNING): quoted must not acknowledge it.
        let started = ContinuousClock.now
        try client.send(Requests.submit(key: "cancelled"))
        var cancelled = false
        while !cancelled, started.duration(to: .now) < .seconds(3) {
            cancelled =
                try primary.sql(
                    "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE wait_event = 'SyncRep'") != "0"
        }
        #expect(cancelled, "the commit waited for the standby")
        let refused = try client.receive()
        #expect(refused.errorCode == "storage_error", "\(refused)")
        // It committed on the primary: the client is told that it may have been applied.
        #expect(Self.message(refused).contains("outcome is unknown"), "\(refused)")
        #expect(started.duration(to: .now) < .seconds(4), "refused by the confirmation, not the timeout")
        // Not cancelled: refused once the transaction timeout passes, its connection closed.
        let waited = ContinuousClock.now
        let timedOut = try client.call(Requests.submit(key: "timed-out"))
        #expect(timedOut.errorCode == "storage_error", "\(timedOut)")
        #expect(Self.message(timedOut).contains("outcome is unknown"), "\(timedOut)")
        #expect(waited.duration(to: .now) < .seconds(10), "within the timeout: \(waited.duration(to: .now))")
        // Its session, left waiting for the standby, is ended a transaction timeout later,
        // rather than kept until the standby is back.
        let ended = ContinuousClock.now + .seconds(30)
        var waiting = "?"
        while ContinuousClock.now < ended {
            waiting = try primary.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
            if waiting == "0" { break }
        }
        #expect(waiting == "0", "sessions still waiting for the standby: \(waiting)")
        let ping = try client.call(Requests.op("ping"))
        #expect(ping["ok"] as? Bool == true, "quoted still answers: \(ping)")
        // The cancelled commit is in the primary's log, but no standby has it: the log is not
        // read out past what a standby confirmed, to anyone.
        let log = try client.call(Requests.op("events", ["since": 0]))
        #expect(log.errorCode == "storage_error", "\(log)")

        // The standby back: writes are acknowledged again, and each retry, with its key, gets
        // its one quote, whatever became of the first attempt.
        try standby.startServer()
        let deadline = ContinuousClock.now + .seconds(60)
        var after: [String: Any] = [:]
        while ContinuousClock.now < deadline {
            after = try client.call(Requests.submit(key: "after"))
            if after["ok"] as? Bool == true { break }
        }
        #expect(after["ok"] as? Bool == true, "\(after)")
        for key in ["cancelled", "timed-out"] {
            let retry = try client.call(Requests.submit(key: key))
            #expect(retry["ok"] as? Bool == true, "\(key): \(retry)")
        }
        #expect(
            try primary.sql(
                "SELECT count(*) FROM quotes WHERE idempotency_key IN ('cancelled', 'timed-out')", database: name)
                == "2")
    }

    /// A refusal's message.
    static func message(_ reply: [String: Any]) -> String {
        (reply["error"] as? [String: Any])?["message"] as? String ?? ""
    }

    /// Checks the log `client` reads: one gap-free sequence, no mechanic booked twice, every
    /// acknowledged submission and completion in `results` applied. Returns its last seq.
    static func checkLog(through client: borrowing Client, holds results: [LoadClient.Result]) throws -> Int {
        let log = try events(client)
        let last = try #require(log.last?["seq"] as? Int)
        #expect(log.map { $0["seq"] as? Int ?? -1 } == Array(1...last), "the sequence is gap-free")
        #expect(doubleBookings(log).isEmpty, "\(doubleBookings(log).prefix(5))")
        var byID: [Int: String] = [:]
        for event in log {
            if let id = event["quoteId"] as? Int, let to = event["to"] as? String { byID[id] = to }
        }
        let missing = results.flatMap(\.submitted).filter { byID[$0] == nil }
        #expect(missing.isEmpty, "acknowledged submissions not in the log: \(missing.prefix(10))")
        let notCompleted = results.flatMap(\.completed).filter { byID[$0] != "completed" }
        #expect(notCompleted.isEmpty, "acknowledged completions not applied: \(notCompleted.prefix(10))")
        return last
    }

    /// Checks that `subscriber` received events in order up to `last`, and that what it missed
    /// (the slow joiner's first events, past a high-water mark) `daemon` replays through
    /// `events`. Returns the seqs it received live.
    static func check(
        _ subscriber: LiveRecorder, index: Int, upTo last: Int, filledFrom daemon: DaemonProcess, _ context: Context
    ) throws -> [Int] {
        #expect(
            subscriber.waitUntil(seq: last, timeout: .seconds(30)),
            "subscriber \(index) reached \(subscriber.seqs.last ?? 0) of \(last)")
        let seqs = subscriber.seqs
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "subscriber \(index) saw events in order")
        let seen = Set(seqs)
        let client = try Client(context, endpoint: daemon.commands)
        let filled = try fill(Array(1...last).filter { !seen.contains($0) }, from: client)
        #expect(Set(seqs + filled) == Set(1...last), "subscriber \(index) has every event")
        return seqs
    }

    /// The whole log, page by page.
    static func events(_ client: borrowing Client) throws -> [[String: Any]] {
        try allEvents(client)
    }

    /// The seqs in `missing`, read through `events`.
    static func fill(_ missing: [Int], from client: borrowing Client) throws -> [Int] {
        var filled: [Int] = []
        for seq in missing {
            let page = try #require(
                try client.call(Requests.op("events", ["since": seq - 1, "limit": 1]))["events"] as? [[String: Any]])
            filled += page.compactMap { $0["seq"] as? Int }.filter { $0 == seq }
        }
        return filled
    }

    /// Every `mechanic.busy` for a mechanic another quote still held, and every `mechanic.free`
    /// by a quote that did not hold them.
    static func doubleBookings(_ log: [[String: Any]]) -> [String] {
        var holder: [Int: Int] = [:]
        var found: [String] = []
        for event in log {
            guard let mechanic = (event["mechanic"] as? [String: Any])?["id"] as? Int,
                let quote = event["quoteId"] as? Int
            else { continue }
            if event["type"] as? String == "mechanic.busy" {
                if let held = holder[mechanic] {
                    found.append("mechanic \(mechanic) booked by \(quote), held by \(held)")
                }
                holder[mechanic] = quote
            } else {
                if holder[mechanic] != quote { found.append("mechanic \(mechanic) freed by \(quote), not its holder") }
                holder[mechanic] = nil
            }
        }
        return found
    }
}

/// The next message, or `nil` when the socket's receive timeout passed first.
private func receiveOrTimeOut(_ socket: borrowing Socket) throws -> Multipart? {
    do {
        return try socket.receiveMultipart()
    } catch  where error.errno == EAGAIN {
        return nil
    }
}

/// Blocks the calling thread until `instant`.
private func waitUntil(_ instant: ContinuousClock.Instant) {
    let remaining = ContinuousClock.now.duration(to: instant)
    guard remaining > .zero else { return }
    let (seconds, attoseconds) = remaining.components
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    nanosleep(&request, nil)
}

/// Waits until `condition` holds, woken by `progress` (each client's answers signal it), at
/// most `timeout`; whether it did.
func waitFor(_ progress: DispatchSemaphore, timeout: Duration = .seconds(60), _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + .milliseconds(Int(timeout.components.seconds * 1_000))
    while !condition() {
        guard progress.wait(timeout: deadline) == .success else { return condition() }
    }
    return true
}

/// One client of the load: a DEALER connected to every daemon (ZeroMQ spreads its requests
/// over those connected) on a thread of its own, submitting with `book` and `wait`, and
/// completing what it booked, until its deadline. A request unanswered (its daemon crashed)
/// is sent again; a submission carries an idempotency key, so a retry never makes a second.
final class LoadClient: @unchecked Sendable {
    struct Result: Sendable {
        /// Quotes whose submission was acknowledged.
        var submitted: [Int] = []
        /// Quotes whose completion was acknowledged.
        var completed: [Int] = []
        /// Requests never answered, retries included.
        var lost: [String] = []
    }

    private let index: Int
    private let endpoints: [String]
    private let deadline: Mutex<ContinuousClock.Instant>
    private let tolerateStorageErrors: Bool
    /// Signalled at each answer, for a test waiting on the clients' figures.
    private let progress: DispatchSemaphore?
    private let state = Mutex((result: Result(), storageErrors: 0))
    private let done = DispatchSemaphore(value: 0)

    init(
        index: Int, endpoints: [String], until deadline: ContinuousClock.Instant, tolerateStorageErrors: Bool = false,
        progress: DispatchSemaphore? = nil
    ) {
        self.index = index
        self.progress = progress
        self.endpoints = endpoints
        self.deadline = Mutex(deadline)
        self.tolerateStorageErrors = tolerateStorageErrors
    }

    var result: Result { state.withLock { $0.result } }
    var acknowledgedCount: Int { state.withLock { $0.result.submitted.count } }
    var storageErrors: Int { state.withLock { $0.storageErrors } }

    func start() {
        Thread { [self] in
            defer { done.signal() }
            do {
                try run()
            } catch {
                state.withLock { $0.result.lost.append("client \(index): \(error)") }
            }
        }.start()
    }

    /// Ends the load now.
    func finish() { deadline.withLock { $0 = .now } }

    func join() { done.wait() }

    private func run() throws {
        let context = try Context()
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.immediate, true)
        try socket.set(.receiveTimeout, 2_000)
        for endpoint in endpoints { try socket.connect(endpoint) }
        var waiting: [Int] = []
        var sequence = 0
        while ContinuousClock.now < deadline.withLock({ $0 }) {
            sequence += 1
            let key = "load-\(index)-\(sequence)"
            var submit = Requests.submit(key: key, book: true, id: key)
            submit["wait"] = true
            guard let reply = try call(socket, submit, id: key) else { continue }
            let id = reply.quoteID
            state.withLock { $0.result.submitted.append(id) }
            progress?.signal()
            switch reply.quote?["state"] as? String {
            case "booked": try complete(id, socket)
            case "waiting": waiting.append(id)
            default: break
            }
            // The line moves as bookings complete: finish what was booked meanwhile.
            var still: [Int] = []
            for quote in waiting {
                let get = Requests.op("get", ["quoteId": quote, "id": "get-\(quote)"])
                guard let current = try call(socket, get, id: "get-\(quote)") else {
                    still.append(quote)
                    continue
                }
                if current.quote?["state"] as? String == "booked" {
                    try complete(quote, socket)
                } else {
                    still.append(quote)
                }
            }
            waiting = still
        }
    }

    private func complete(_ quote: Int, _ socket: borrowing Socket) throws {
        let id = "complete-\(quote)"
        let request = Requests.op("complete", ["quoteId": quote, "id": id])
        guard let reply = try call(socket, request, id: id, acceptRefusal: true) else { return }
        // A retry of a completion already applied is refused as a transition from completed.
        if reply["ok"] as? Bool == true || reply.quote == nil {
            state.withLock { $0.result.completed.append(quote) }
        }
    }

    /// Sends `request` until a reply with `id` comes (a crashed daemon never answers; a
    /// storage error is retried when tolerated); `nil` when refused.
    private func call(_ socket: borrowing Socket, _ request: [String: Any], id: String, acceptRefusal: Bool = false)
        throws -> [String: Any]?
    {
        let body = Array(try JSONSerialization.data(withJSONObject: request))
        let giveUp = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < giveUp {
            try socket.send(multipart: [[], body])
            while let message = try receiveOrTimeOut(socket) {
                guard let frame = message.frames.last,
                    let reply = try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any],
                    reply["id"] as? String == id
                else { continue }  // a late answer to an earlier attempt
                if reply["ok"] as? Bool == true { return reply }
                let code = (reply["error"] as? [String: Any])?["code"] as? String
                if code == "storage_error" {
                    state.withLock { $0.storageErrors += 1 }
                    progress?.signal()
                    guard tolerateStorageErrors else {
                        state.withLock { $0.result.lost.append("\(id): \(reply)") }
                        return nil
                    }
                    break
                }
                if acceptRefusal { return reply }
                state.withLock { $0.result.lost.append("\(id) refused: \(reply)") }
                return nil
            }
        }
        state.withLock { $0.result.lost.append("\(id): no answer within 60 s") }
        return nil
    }
}

/// A SUB socket on a thread of its own, recording the seq of every event it receives.
final class LiveRecorder: @unchecked Sendable {
    private let received = Mutex<[Int]>([])
    private let arrived = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(endpoint: String) throws {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        Thread { [self] in
            defer { done.signal() }
            do {
                let context = try Context()
                let socket = try Socket(context, type: .sub)
                try socket.set(.linger, 0)
                try socket.set(.receiveHighWaterMark, 0)
                try socket.set(.receiveTimeout, 100)
                try socket.set(.subscribe, [UInt8]())
                try socket.connect(endpoint)
                ready.signal()
                while !stopping.load(ordering: .relaxed) {
                    guard let message = try receiveOrTimeOut(socket), let body = message.frames.last,
                        let event = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
                        let seq = event["seq"] as? Int
                    else { continue }
                    received.withLock { $0.append(seq) }
                    arrived.signal()
                }
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
            }
        }.start()
        ready.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    var seqs: [Int] { received.withLock { $0 } }

    /// Waits until an event with `seq` or later has arrived.
    func waitUntil(seq: Int, timeout: Duration) -> Bool {
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout.components.seconds * 1_000))
        while (seqs.last ?? 0) < seq {
            guard arrived.wait(timeout: deadline) == .success else { return false }
        }
        return true
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        done.wait()
    }
}
