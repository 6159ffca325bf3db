import ArgumentParser
import Foundation
import ZeroMQ

/// `quoted-bench load`: drives a real `quoted` over the wire and reports throughput, latency
/// percentiles (submit -> ack, submit -> event, book -> complete), the daemon's CPU and
/// memory, and, with `--baseline`, raw ZeroMQ echo through the same clients for scale.
struct LoadBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Load-test a real quoted end to end: throughput, latency percentiles, CPU, memory.",
        discussion: """
            Starts quoted (the release binary next to this one, or --quoted) on free loopback ports \
            with its own state and a catalog of --mechanics mechanics, then runs the workload. \
            Closed loop by default (each client keeps --window requests in flight); --rate makes it \
            open loop at that many requests per second in all, latency counted from when each request \
            was due. --scaling runs a series and prints one row per point.
            """)

    enum Series: String, ExpressibleByArgument, CaseIterable {
        case clients, mechanics, store, subscribers, load, all
    }

    @Option(help: "The quoted binary to start.") var quoted: String?
    @Option(help: "What to send.") var workload: Workload = .submit
    @Option(help: "DEALER clients.") var clients = 16
    @Option(help: "Requests in flight per client (closed loop).") var window = 64
    @Option(help: "Offered requests per second in all (open loop).") var rate: Double?
    @Option(help: "Seconds to send for (submit, mixed; a cap for contention).") var duration = 5.0
    @Option(help: "Book + complete cycles (contention).") var cycles = 5_000
    @Option(help: "SUB subscribers to the events.") var subscribers = 1
    @Option(help: "Mechanics in the catalog.") var mechanics = 10
    @Option(help: "Quotes stored before the run (submitted at full speed, not measured).") var preload = 0
    @Option(
        help:
            "The submissions' idempotency keys: by request number, version 7 UUIDs (the client library's) or version 4."
    )
    var keys: KeyOrder = .ordered
    @Flag(help: "Each submission a new customer's, rather than all one customer's.") var distinctCustomers = false
    @Flag(help: "Also run raw ZeroMQ echo through the same clients and report the ratio.") var baseline = false
    @Flag(
        help:
            "Contention: book with \"wait\": true, completing each quote once booked; measured beside the same workload without it."
    )
    var wait = false
    @Flag(
        help:
            "Also measure the same point with CURVE on both sockets (quoted with --server-key and --clients, every client and subscriber with an operator key)."
    )
    var curve = false
    @Option(
        help:
            "Also measure the point on PostgreSQL at this URL (a database for the benchmark alone), after SQLite, with each of --daemons."
    )
    var postgres: String?
    @Option(
        help:
            "Measure the point with metrics off and on (quoted --metrics 127.0.0.1:0), alternated, this many rounds of each."
    )
    var compareMetrics = 0
    @Option(help: "Daemons sharing the PostgreSQL database, comma-separated counts: every client connects to all.")
    var daemons = "1"
    @Option(help: "Run a series instead of one point.") var scaling: Series?
    @Option(help: "Offered loads for --scaling load, comma-separated.") var rates =
        "500,1000,2000,3000,4000,5000,10000,20000,30000,40000"
    @Option(help: "Store sizes for --scaling store, comma-separated.") var preloads = "0,100000,1000000"
    @Option(help: "Write --scaling load's points as a gnuplot data file.") var plotData: String?
    @Flag(help: "Print rows as a Markdown table.") var markdown = false
    @Flag(help: "A few seconds of each workload, with the baseline and the booking audit: proves it works.")
    var quick = false

    func run() throws {
        let context = try Context()
        var factory = RequestFactory(runTag: "bench-\(UUID().uuidString.prefix(8))")
        factory.keyOrder = keys
        factory.distinctCustomers = distinctCustomers
        var bench = Bench(
            context: context, executable: quoted ?? Self.sibling("quoted"), markdown: markdown, factory: factory)
        let point = Point(
            traffic: Traffic(
                workload: workload, clients: clients, window: window, duration: .seconds(duration),
                cycles: cycles, rate: rate),
            subscribers: subscribers, mechanics: mechanics, preload: preload, wait: false)
        if quick {
            try bench.quick()
        } else if let scaling {
            try bench.series(
                scaling, base: point, rates: Self.numbers(rates), preloads: Self.numbers(preloads).map(Int.init),
                plotData: plotData)
        } else {
            bench.header()
            if baseline { try bench.baseline(point) }
            try bench.measure(point, label: "\(point.workload)")
            if wait {
                var waiting = point
                waiting.wait = true
                try bench.measure(waiting, label: "\(point.workload) --wait")
            }
            if curve {
                var secured = point
                secured.curve = true
                try bench.measure(secured, label: "\(point.workload) --curve")
            }
            // Off, on, on, off, off, on...: a drift of the machine over the run weighs on both.
            for round in stride(from: 1, through: compareMetrics, by: 1) {
                for metrics in round % 2 == 1 ? [false, true] : [true, false] {
                    var measured = point
                    measured.metrics = metrics
                    try bench.measure(measured, label: "\(point.workload) metrics \(metrics ? "on" : "off") #\(round)")
                }
            }
            if let postgres {
                for count in Self.numbers(daemons).map(Int.init) where count >= 1 {
                    var shared = point
                    shared.postgres = postgres
                    shared.daemons = count
                    try bench.measure(shared, label: "\(point.workload) pg x\(count)")
                }
            }
        }
        if bench.failures > 0 { throw ExitCode(1) }
    }

    static func sibling(_ name: String) -> String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent(name).path
    }

    static func numbers(_ list: String) -> [Double] {
        list.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }
}

/// One measured configuration.
@dynamicMemberLookup
struct Point {
    var traffic: Traffic
    var subscribers: Int
    var mechanics: Int
    var preload: Int
    /// Bookings wait in line when no mechanic is free.
    var wait = false
    /// quoted runs with `security`, and every socket connects with CURVE.
    var curve = false
    /// quoted stores in PostgreSQL at this URL instead of SQLite.
    var postgres: String?
    /// Daemons on that database, every client connected to all of them.
    var daemons = 1
    /// quoted serves its metrics over HTTP (`--metrics 127.0.0.1:0`).
    var metrics = false

    subscript<Value>(dynamicMember path: WritableKeyPath<Traffic, Value>) -> Value {
        get { traffic[keyPath: path] }
        set { traffic[keyPath: path] = newValue }
    }
}
