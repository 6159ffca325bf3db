import Foundation
import ZeroMQ

/// Runs measured points against fresh daemons and prints one row each.
struct Bench {
    let context: Context
    let executable: String
    let markdown: Bool
    let factory: RequestFactory
    private var nextRequestID: Int64 = 1
    /// Echo throughput by client count, for the "of echo" column.
    private var echo: [Int: Double] = [:]
    /// Points whose run showed a defect: no replies, unanswered requests, double bookings.
    private(set) var failures = 0

    init(context: Context, executable: String, markdown: Bool, factory: RequestFactory) {
        self.context = context
        self.executable = executable
        self.markdown = markdown
        self.factory = factory
    }

    static let columns = [
        "point", "load", "replies/s", "of echo", "ack p50", "p90", "p99", "p99.9", "max", "event p50", "p99",
        "max", "cycles/s", "errors", "cpu", "peak RSS", "startup",
    ]

    func header() {
        if markdown {
            emit("| " + Self.columns.joined(separator: " | ") + " |")
            emit("|" + String(repeating: " --- |", count: Self.columns.count))
        } else {
            emit("# latencies in ms; cpu in cores used by quoted; RSS in MiB; startup in ms")
            emit(Self.format(Self.columns))
        }
    }

    private func row(_ cells: [String]) {
        emit(markdown ? "| " + cells.joined(separator: " | ") + " |" : Self.format(cells))
    }

    private static func format(_ cells: [String]) -> String {
        let widths = [22, 16, 10, 8, 8, 8, 8, 8, 8, 9, 8, 8, 9, 7, 5, 8, 7]
        return zip(cells, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ")
    }

    /// Raw ZeroMQ echo through the point's clients and window, closed loop.
    mutating func baseline(_ point: Point) throws {
        let server = EchoServer(context: context)
        defer { server.stop() }
        let plan = LoadPlan(
            endpoint: server.endpoint,
            traffic: Traffic(
                workload: .submit, clients: point.clients, window: point.window, duration: point.duration,
                cycles: 0, rate: nil),
            factory: factory,
            firstRequestID: nextRequestID)
        let result = try LoadDriver(context: context, plan: plan).run()
        nextRequestID = result.nextRequestID
        echo[point.clients] = result.throughput
        row(
            ["zmq echo (baseline)", "closed \(point.clients)x\(point.window)", Self.rate(result.throughput), "100%"]
                + result.ack.summary + ["-", "-", "-", "-", "0", "-", "-", "-"])
    }

    /// Starts a daemon for `point`, fills its store, runs the workload and prints the row.
    @discardableResult
    mutating func measure(_ point: Point, label: String) throws -> (LoadResult, Latency) {
        // Start every point from a quiet disk: write back what earlier points left dirty, or it
        // lands in this point's fsyncs (the low-rate open-loop rows after the subscriber series
        // showed p99 of 30-200 ms that isolated runs never did).
        sync()
        let keys = point.curve ? try BenchKeys() : nil
        defer { keys?.remove() }
        let arguments =
            (keys?.daemonArguments ?? []) + (point.postgres.map { ["--postgres", $0] } ?? [])
            + (point.metrics ? ["--metrics", "127.0.0.1:0"] : [])
        let daemon = try BenchDaemon(executable: executable, mechanics: point.mechanics, arguments: arguments)
        var pointFactory = factory
        pointFactory.wait = point.wait
        defer { daemon.remove() }
        let others = try (1..<max(point.daemons, 1)).map { _ in
            try BenchDaemon(executable: executable, mechanics: point.mechanics, arguments: arguments)
        }
        defer { for other in others { other.remove() } }
        if point.preload > 0 {
            try fill(daemon, quotes: point.preload, curve: keys)
            daemon.stop()
            // The fill wrote gigabytes: write them back now, not during the measured run.
            sync()
            try daemon.start()  // startup and memory with the stored quotes
        }
        // Durable figures only: the store reads its writer's setting back at start (GRDB once
        // reset it, and every figure was taken without the commit fsync until it was found).
        let expected = ProcessInfo.processInfo.environment["QUOTED_STORE_SQLITE_SYNCHRONOUS"]?.lowercased() ?? "full"
        guard point.postgres != nil || daemon.synchronous == expected else {
            throw BenchError("quoted commits with synchronous=\(daemon.synchronous), not \(expected)")
        }
        let startup = daemon.startup
        let tap = EventTap(context: context, events: daemon.events, subscribers: point.subscribers, curve: keys)
        let lastSeq: Int64
        do {
            lastSeq = try handshake(daemon.commands, tap: tap, curve: keys)
        } catch {
            _ = try? tap.stop()
            throw error
        }
        let plan = LoadPlan(
            endpoint: daemon.commands, traffic: point.traffic, factory: pointFactory, events: daemon.events,
            firstRequestID: nextRequestID, curve: keys,
            otherEndpoints: others.map(\.commands))
        let all = [daemon] + others
        let cpuBefore = all.map(\.cpuSeconds)
        let threadsBefore = ThreadTimes.of(process: daemon.processIdentifier)
        let threadsFrom = ContinuousClock.now
        let activityBefore = try all.map { try self.activity($0.commands, curve: keys) }
        let serverBefore = point.postgres == nil ? [:] : ProcessCPU.named("postgres")
        // The disk's flushes, for a store on this machine's disk (SQLite's, in the state directory).
        let disk = point.postgres == nil ? DiskFlushes(holding: daemon.stateDirectory) : nil
        let flushesBefore = disk?.count()
        let result = try LoadDriver(context: context, plan: plan).run()
        let flushes = disk?.count().flatMap { after in flushesBefore.map { after &- $0 } }
        let cpuEach = zip(all, cpuBefore).map { $0.cpuSeconds - $1 }
        let serverCPU =
            serverBefore.isEmpty ? nil : ProcessCPU.used(from: serverBefore, to: ProcessCPU.named("postgres"))
        let threadsAfter = ThreadTimes.of(process: daemon.processIdentifier)
        let threads = ThreadTimes.summary(
            from: threadsBefore, to: threadsAfter, over: (ContinuousClock.now - threadsFrom).seconds)
        let activities = try zip(all, activityBefore).map { try self.activity($0.commands, curve: keys).since($1) }
        let run = activities.dropFirst().reduce(activities[0]) { $0.adding($1) }
        let committed = run.batches
        if result.elapsed > 0, committed > 0 {
            // Batches (a group commit each when they write) bound turnover (contention); requests
            // per batch tell how well they group.
            let rate = String(format: "%.0f", Double(committed) / result.elapsed)
            let each = String(format: "%.1f", Double(result.replies) / Double(committed))
            // What a commit costs the disk: an `fdatasync` is one flush or more (the file
            // system's journal), and the checkpoints add theirs.
            let flushed = flushes.map {
                String(
                    format: ", %.2f disk flushes a batch (the device's, whoever asked)", Double($0) / Double(committed))
            }
            FileHandle.standardError.write(
                Data("# \(label): \(rate) batches/s, \(each) requests each\(flushed ?? "")\n".utf8))
        }
        if point.rate != nil, result.late.count > 0 {
            // The generator's own delay is part of every latency it reports.
            let late = result.late.summary.joined(separator: " ")
            FileHandle.standardError.write(
                Data("# \(label): sent late after due, p50 p90 p99 p99.9 max (ms): \(late)\n".utf8))
        }
        if let shares = run.cumulativeShares {
            // The daemon's own share of a latency, from receipt to the reply sent.
            FileHandle.standardError.write(Data("# \(label): answered in quoted within: \(shares)\n".utf8))
        }
        if !threads.isEmpty {
            // Which thread bounds the point, and how long each waits for a core when woken.
            FileHandle.standardError.write(
                Data("# \(label): threads (ran, waited for a core, switches/s): \(threads)\n".utf8))
        }
        let cpu = cpuEach.reduce(0, +)
        if let serverCPU, result.elapsed > 0, result.replies > 0 {
            // The database's share of a submission beside quoted's, on the same cores.
            let replies = Double(result.replies)
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "# %@: PostgreSQL (every postgres process here) used %.2f cores, %.1f us a reply; quoted %.1f us\n",
                        label, serverCPU / result.elapsed, serverCPU / replies * 1e6, cpu / replies * 1e6
                    ).utf8))
        }
        if all.count > 1, result.elapsed > 0 {
            let each = cpuEach.map { String(format: "%.2f", $0 / result.elapsed) }.joined(separator: ", ")
            FileHandle.standardError.write(Data("# \(label): cores used by each daemon: \(each)\n".utf8))
        }
        nextRequestID = result.nextRequestID
        // Replies leave before their events: let the last batch's events arrive.
        tap.waitUntilSeen(quote: result.submitted.map(\.quote).max() ?? 0, timeout: .seconds(10))
        let seen = try tap.stop()
        var eventLatency = Latency()
        var missing = 0
        if point.subscribers > 0 {
            for submission in result.submitted {
                if let at = seen[submission.quote] {
                    eventLatency.record(nanoseconds: at &- min(at, submission.at))
                } else {
                    missing += 1
                }
            }
        }
        var problems: [String] = []
        if result.replies == 0 { problems.append("no replies") }
        if result.unanswered > 0 {
            let note = "\(result.unanswered) requests unanswered 10 s after sending stopped"
            if point.rate == nil {
                problems.append(note)  // closed loop: a reply was lost
            } else {
                // Open loop beyond capacity: the queue outgrew the drain; counted at their age.
                FileHandle.standardError.write(Data("# \(label): \(note) (counted in ack at their age)\n".utf8))
            }
        }
        if missing > 0 {
            // PUB drops for a subscriber whose queue is full (by design: a slow peer never stalls
            // quoted); a benchmark subscriber short of CPU shows it. Reported, not a failure.
            FileHandle.standardError.write(
                Data(
                    ("# \(label): \(missing) accepted submissions' events never reached the subscriber"
                        + (point.daemons > 1
                            ? " (it listens to the first daemon, which publishes its own commits)" : "")
                        + "\n").utf8))
        }
        if point.workload != .submit {
            let audit = try BookingAudit.run(context: context, endpoint: daemon.commands, since: lastSeq, curve: keys)
            problems += audit.violations.prefix(5) + audit.unfair.prefix(5)
            if !audit.violations.isEmpty { problems.append("\(audit.violations.count) double-booking violations") }
            if !audit.unfair.isEmpty { problems.append("\(audit.unfair.count) fairness violations") }
            FileHandle.standardError.write(
                Data(
                    ("# \(label): audit of \(audit.events) events, \(audit.bookings) bookings (\(audit.fromLine) from the "
                        + "wait-list): \(audit.violations.count) double bookings, \(audit.unfair.count) fairness violations\n")
                        .utf8))
        }
        let errors = result.errors.values.reduce(0, +)
        let load = point.rate.map { "open \(Self.rate($0))/s" } ?? "closed \(point.clients)x\(point.window)"
        let ofEcho = echo[point.clients].map { String(format: "%.1f%%", result.throughput / $0 * 100) } ?? "-"
        let eventCells =
            eventLatency.count > 0
            ? [
                Latency.format(eventLatency.milliseconds(at: 50)), Latency.format(eventLatency.milliseconds(at: 99)),
                Latency.format(eventLatency.maxMilliseconds),
            ] : ["-", "-", "-"]
        let cycles =
            point.workload == .contention && result.elapsed > 0
            ? Self.rate(Double(result.cycles) / result.elapsed) : "-"
        row(
            [label, load, Self.rate(result.throughput), ofEcho] + result.ack.summary + eventCells + [
                cycles,
                result.replies > 0 ? String(format: "%.1f%%", Double(errors) / Double(result.replies) * 100) : "-",
                String(format: "%.2f", result.elapsed > 0 ? cpu / result.elapsed : 0),
                String(format: "%.0f", daemon.peakResidentMiB),
                String(format: "%.0f", startup.seconds * 1000),
            ])
        if !result.errors.isEmpty {
            let codes = result.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            FileHandle.standardError.write(Data("# \(label): refusals \(codes.joined(separator: ", "))\n".utf8))
        }
        if !problems.isEmpty {
            failures += 1
            FileHandle.standardError.write(Data("# \(label): FAILED: \(problems.joined(separator: "; "))\n".utf8))
        }
        return (result, eventLatency)
    }

    /// Submits `quotes` valid quotes as fast as quoted takes them.
    private mutating func fill(_ daemon: BenchDaemon, quotes: Int, curve: BenchKeys?) throws {
        let plan = LoadPlan(
            endpoint: daemon.commands,
            traffic: Traffic(
                workload: .submit, clients: 16, window: 64, duration: .seconds(3600), cycles: 0, rate: nil),
            limit: quotes, factory: factory, firstRequestID: nextRequestID, curve: curve)
        let result = try LoadDriver(context: context, plan: plan).run()
        nextRequestID = result.nextRequestID
        guard result.ok == quotes else { throw BenchError("filling the store: \(result.ok) of \(quotes) accepted") }
    }

    /// Submits until every subscriber has seen an event (a subscription reaches the publisher
    /// some time after `connect`: the slow-joiner effect), then returns the log's last seq.
    private mutating func handshake(_ endpoint: String, tap: EventTap, curve: BenchKeys?) throws -> Int64 {
        let socket = try Socket(context, type: .dealer)
        try curve?.configure(socket)
        try socket.set(.linger, 0)
        try socket.set(.receiveTimeout, 10_000)
        try socket.connect(endpoint)
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            guard ContinuousClock.now < deadline else {
                throw BenchError("the subscribers never received the handshake's events")
            }
            _ = try socket.send(factory.body(.submit, id: nextRequestID))
            nextRequestID += 1
            guard try socket.receive() != nil else { throw BenchError("quoted did not answer the handshake") }
        } while !tap.waitUntilEach(received: 1, timeout: .milliseconds(100))
        _ = try socket.send(Array(#"{"v":1,"op":"ping"}"#.utf8))
        guard let pong = try socket.receive() else { throw BenchError("quoted did not answer ping") }
        let text = String(decoding: pong, as: UTF8.self)
        guard let range = text.range(of: #""lastSeq":"#) else { return 0 }
        return Int64(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// The daemon at `endpoint`'s own count of its work: its `stats` reply's `activity`.
    private mutating func activity(_ endpoint: String, curve: BenchKeys?) throws -> DaemonActivity {
        let socket = try Socket(context, type: .dealer)
        try curve?.configure(socket)
        try socket.set(.linger, 0)
        try socket.set(.receiveTimeout, 10_000)
        try socket.connect(endpoint)
        _ = try socket.send(Array(#"{"v":1,"op":"stats"}"#.utf8))
        guard let reply = try socket.receive() else { throw BenchError("quoted did not answer stats") }
        return try DaemonActivity(statsReply: reply)
    }

    static func rate(_ value: Double) -> String {
        value >= 10_000 ? String(format: "%.0fk", value / 1000) : String(format: "%.0f", value)
    }
}

extension Bench {
    /// A few seconds of every workload, with the baseline and the audit.
    mutating func quick() throws {
        header()
        let base = Point(
            traffic: Traffic(workload: .submit, clients: 4, window: 16, duration: .seconds(1), cycles: 300, rate: nil),
            subscribers: 1, mechanics: 10, preload: 0)
        try baseline(base)
        try measure(base, label: "submit")
        var open = base
        open.rate = 500
        try measure(open, label: "submit open loop")
        var mixed = base
        mixed.workload = .mixed
        try measure(mixed, label: "mixed")
        var contention = base
        contention.workload = .contention
        contention.clients = 16
        contention.window = 1
        try measure(contention, label: "contention")
        contention.wait = true
        try measure(contention, label: "contention --wait")
        var curve = base
        curve.curve = true
        try measure(curve, label: "submit --curve")
    }

    /// `base` as a submit workload, once for each of `values`, set by `vary`.
    private static func submits<Value>(
        _ values: [Value], from base: Point, _ vary: (inout Point, Value) -> Void
    ) -> [(Value, Point)] {
        values.map { value in
            var point = base
            point.workload = .submit
            vary(&point, value)
            return (value, point)
        }
    }

    /// A series of points varying one thing; `plotData` receives --scaling load's curve.
    mutating func series(
        _ series: LoadBench.Series, base: Point, rates: [Double], preloads: [Int], plotData: String?
    ) throws {
        let all = series == .all
        if all || series == .clients {
            section("Clients (closed loop, submit)")
            for (clients, point) in Self.submits(
                [1, 4, 16, 64], from: base,
                {
                    $0.clients = $1
                    $0.rate = nil
                })
            {
                try baseline(point)
                try measure(point, label: "submit, \(clients) clients")
            }
        }
        if all || series == .subscribers {
            section("Subscribers (closed loop, submit)")
            for (subscribers, point) in Self.submits([0, 1, 10, 100], from: base, { $0.subscribers = $1 }) {
                try measure(point, label: "\(subscribers) subscribers")
            }
        }
        if all || series == .load {
            section("Offered load (open loop, submit)")
            var plot = "# offered/s  ack-p50  ack-p99  event-p99  (ms)\n"
            for (rate, point) in Self.submits(rates, from: base, { $0.rate = $1 }) {
                let (result, event) = try measure(point, label: "submit at \(Self.rate(rate))/s")
                plot += String(
                    format: "%.0f %.3f %.3f %.3f\n", rate, result.ack.milliseconds(at: 50),
                    result.ack.milliseconds(at: 99),
                    event.count > 0 ? event.milliseconds(at: 99) : 0)
            }
            if let plotData { try plot.write(toFile: plotData, atomically: true, encoding: .utf8) }
        }
        if all || series == .mechanics {
            section("Mechanics (contention workload: 64 clients book and complete)")
            for mechanics in [10, 1_000, 100_000] {
                var point = base
                point.workload = .contention
                point.clients = 64
                point.window = 1
                point.mechanics = mechanics
                try measure(point, label: "\(mechanics) mechanics")
            }
            section("Mixed workload")
            var point = base
            point.workload = .mixed
            try measure(point, label: "mixed")
        }
        if all || series == .store {
            section("Stored quotes (closed loop, submit; startup and RSS with the store filled)")
            for (preload, point) in Self.submits(preloads, from: base, { $0.preload = $1 }) {
                try measure(point, label: "\(preload) stored")
            }
        }
    }

    private func section(_ title: String) {
        emit(markdown ? "\n#### \(title)\n" : "\n## \(title)")
        header()
    }
}

/// Writes a line to standard output at once (unbuffered), so rows appear as points finish.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
