import Foundation
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// What an operator's Prometheus sees: `/metrics` scraped over HTTP and read by the official
/// Python client's text-format parser (`prometheus_client`), `/healthz` and `/readyz`.
@Suite("Metrics over HTTP", .serialized, .timeLimit(.minutes(3)))
struct MetricsTests {
    @Test("The counters scraped from /metrics equal the requests sent, by operation and outcome")
    func countersEqualWhatWasSent() throws {
        let port = try freePort()
        let daemon = try DaemonProcess(arguments: ["--metrics", "127.0.0.1:\(port)"])
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)

        // A known mix, each reply checked, so the expectation is what was sent, not read back.
        var sent: [String: Int] = [:]
        func expect(_ op: String, _ code: String, _ reply: [String: Any]) {
            #expect((reply.errorCode ?? "ok") == code, "\(op): \(reply)")
            sent["\(op)/\(code)", default: 0] += 1
        }
        var ids: [Int] = []
        for index in 0..<4 {
            let reply = try client.call(Requests.submit(name: "Customer \(index)", mechanic: "Joe Murphy"))
            ids.append(reply.quoteID)
            expect("submit", "ok", reply)
        }
        for _ in 0..<2 { expect("submit", "invalid_submission", try client.call(Requests.submit(email: "nope"))) }
        for _ in 0..<3 { expect("get", "unknown_quote", try client.call(Requests.op("get", ["quoteId": 9_999]))) }
        expect("get", "ok", try client.call(Requests.op("get", ["quoteId": ids[0]])))
        expect("book", "ok", try client.call(Requests.op("book", ["quoteId": ids[0]])))
        expect("complete", "ok", try client.call(Requests.op("complete", ["quoteId": ids[0]])))
        expect("complete", "illegal_transition", try client.call(Requests.op("complete", ["quoteId": ids[1]])))
        for _ in 0..<5 { expect("ping", "ok", try client.call(Requests.op("ping"))) }
        expect("list", "ok", try client.call(Requests.op("list")))
        expect("unknown", "unknown_op", try client.call(Requests.op("teleport")))
        try client.sendRaw(Array("not json".utf8))
        expect("unknown", "invalid_json", try client.receive())

        let scrape = try Scrape(port: port)
        #expect(scrape.status == 200)
        #expect(scrape.contentType.hasPrefix("text/plain"))
        #expect(scrape.healthz == 200)
        #expect(scrape.readyz == 200, "\(scrape.readyzBody)")
        #expect(scrape.types["quoted_requests"] == "counter")
        #expect(scrape.types["quoted_request_duration_seconds"] == "histogram")
        // Every (op, code) sent, and nothing else, non-zero.
        var counted: [String: Int] = [:]
        for sample in scrape.samples where sample.name == "quoted_requests_total" && sample.value > 0 {
            counted["\(sample.labels["op"] ?? "?")/\(sample.labels["code"] ?? "?")"] = Int(sample.value)
        }
        #expect(counted == sent)
        // One duration per request, by operation.
        var timed: [String: Int] = [:]
        for sample in scrape.samples where sample.name == "quoted_request_duration_seconds_count" && sample.value > 0 {
            timed[sample.labels["op"] ?? "?"] = Int(sample.value)
        }
        var sentByOp: [String: Int] = [:]
        for (key, count) in sent { sentByOp[String(key.split(separator: "/")[0]), default: 0] += count }
        #expect(timed == sentByOp)

        // The store's state, read at the scrape: 4 ready, then one booked and completed.
        #expect(scrape.value("quoted_quotes", ["state": "ready"]) == 3)
        #expect(scrape.value("quoted_quotes", ["state": "completed"]) == 1)
        #expect(scrape.value("quoted_mechanics", ["status": "busy"]) == 0)
        #expect((scrape.value("quoted_mechanics", ["status": "free"]) ?? 0) > 0)
        #expect(scrape.value("quoted_mechanics", ["status": "off_duty"]) == 0)
        #expect(scrape.value("quoted_waiting_quotes") == 0)
        // Each submission announces submitted and ready; the booking two, the completion two.
        #expect(scrape.value("quoted_events_published_total") == 12)
        #expect(scrape.value("quoted_last_event_seq") == 12)
        #expect(scrape.value("quoted_store_errors_total") == 0)
        #expect((scrape.value("quoted_batch_size_count") ?? 0) >= 1)
        #expect((scrape.value("quoted_commit_duration_seconds_count") ?? 0) >= 1)
        #expect((scrape.value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((scrape.value("process_cpu_seconds_total") ?? 0) > 0)

        // The Grafana dashboard in deploy/ queries only what quoted exports.
        let names = Set(scrape.samples.map(\.name))
        for metric in try Self.dashboardMetrics() {
            #expect(names.contains(metric), "deploy/grafana/quoted-dashboard.json queries \(metric), not exported")
        }
    }

    /// Every metric name in the dashboard's queries.
    static func dashboardMetrics() throws -> Set<String> {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("deploy/grafana/quoted-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        var metrics: Set<String> = []
        for panel in panels {
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                let expression = target["expr"] as? String ?? ""
                for match in expression.matches(of: /\b(quoted|process)_[a-z_]+/) {
                    metrics.insert(String(match.output.0))
                }
            }
        }
        #expect(metrics.count >= 10)
        return metrics
    }

    @Test("A metrics.listen that is not HOST:PORT stops start-up, naming the key")
    func invalidListenIsNamed() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted"))
        process.arguments = ["--metrics", "localhost", "--state-dir", NSTemporaryDirectory() + "quoted-bad-metrics"]
        let result = try process.runToEnd()
        let text = result.stderr
        #expect(result.status == 78)
        #expect(text.contains("metrics.listen"), "\(text)")
    }

    @Test(
        "a flood of idle connections to the metrics port holds no more of the daemon's descriptors than its limit, and the daemon serves on"
    )
    func idleConnectionsAreBounded() throws {
        let port = try freePort()
        let daemon = try DaemonProcess(arguments: ["--metrics", "127.0.0.1:\(port)"])
        defer { #expect(daemon.stop() == 0) }
        #expect(try Scrape.status(port: port, path: "/healthz").code == 200)
        let before = daemon.openDescriptors
        // 200 connections that never ask anything: the kernel completes them all (the listen
        // backlog), the daemon takes 64 of them (MetricsServer.maximumConnections).
        var connections: [Int32] = []
        defer { for connection in connections { close(connection) } }
        for _ in 0..<200 { connections.append(try loopbackConnection(port: port)) }
        // Watched until it has taken its 64, then for a second more (well within the 10 s
        // after which idle connections are closed): the count must stay there.
        var most = daemon.openDescriptors
        var reached: ContinuousClock.Instant?
        let deadline = ContinuousClock.now + .seconds(8)
        while ContinuousClock.now < min(deadline, (reached ?? deadline) + .seconds(1)) {
            Thread.sleep(forTimeInterval: 0.01)
            most = max(most, daemon.openDescriptors)
            // (A few short of 64: a descriptor counted in `before`, the last request's, may
            // close meanwhile.)
            if reached == nil, most >= before + 60 { reached = .now }
        }
        #expect(reached != nil, "the daemon took connections up to its limit: \(before) -> \(most)")
        #expect(most <= before + 64 + 8, "and no more: \(before) -> \(most)")
        // Meanwhile ZeroMQ clients are served.
        let context = try Context()
        let client = try Client(context, endpoint: daemon.commands)
        #expect(try client.call(Requests.op("ping"))["ok"] as? Bool == true)
        for connection in connections { close(connection) }
        connections = []
        #expect(try Scrape.waitForStatus(port: port, path: "/healthz", 200) != nil, "served again")
    }

    @Test(
        "a metrics.listen beyond loopback stops start-up with exit 78 naming the key; metrics.allowRemote lets it bind, allowInsecure does not"
    )
    func metricsBeyondLoopbackRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wide-\(UUID().uuidString)").path
        let refused = try Binaries.run(
            "quoted", ["--metrics", "0.0.0.0:0", "--state-dir", directory],
            environment: ProcessInfo.processInfo.environment)
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("metrics.listen: \"0.0.0.0:0\""), "\(refused.stderr)")
        #expect(refused.stderr.contains("metrics.allowRemote"))
        var insecure = ProcessInfo.processInfo.environment
        insecure["QUOTED_ALLOW_INSECURE"] = "true"
        let stillRefused = try Binaries.run(
            "quoted", ["--metrics", "0.0.0.0:0", "--state-dir", directory], environment: insecure)
        #expect(stillRefused.status == 78, "\(stillRefused.stderr)")
        let daemon = try DaemonProcess(
            arguments: ["--metrics", "0.0.0.0:0"], environment: ["QUOTED_METRICS_ALLOW_REMOTE": "true"])
        #expect(daemon.stop() == 0)
    }

    @Test("/readyz answers 503 with the reason while PostgreSQL is down, and 200 again once it is back")
    func readinessFollowsTheStore() throws {
        let cluster = try PostgresCluster.startPrivate()
        let url = try cluster.createDatabase()
        let port = try freePort()
        let daemon = try DaemonProcess(arguments: ["--postgres", url, "--metrics", "127.0.0.1:\(port)"])
        defer { daemon.stop() }
        #expect(try Scrape.status(port: port, path: "/readyz").code == 200)

        try cluster.stopServer()
        let down = try #require(try Scrape.waitForStatus(port: port, path: "/readyz", 503))
        #expect(down.body.contains("store"), "\(down.body)")
        #expect(try Scrape.status(port: port, path: "/healthz").code == 200, "alive while not ready")
        // Metrics are still served, the gauges read from the store left as they were.
        #expect(try Scrape(port: port).status == 200)

        try cluster.startServer()
        #expect(try Scrape.waitForStatus(port: port, path: "/readyz", 200) != nil, "ready again")
    }
}

/// One scrape of a daemon's metrics server, parsed by Python's `prometheus_client`.
struct Scrape {
    struct Sample {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    var status: Int
    var contentType: String
    /// Metric family types by family name (the parser names counters without `_total`).
    var types: [String: String]
    var samples: [Sample]
    var healthz: Int
    var readyz: Int
    var readyzBody: String

    private static let script = """
        import json, sys, urllib.request, urllib.error
        from prometheus_client.parser import text_string_to_metric_families
        base = "http://127.0.0.1:" + sys.argv[1]
        def get(path):
            try:
                with urllib.request.urlopen(base + path, timeout=10) as r:
                    return r.status, r.read().decode(), r.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode(), e.headers.get("Content-Type", "")
        status, text, content_type = get("/metrics")
        types, samples = {}, []
        for family in text_string_to_metric_families(text):
            types[family.name] = family.type
            for s in family.samples:
                samples.append([s.name, s.labels, s.value])
        ready = get("/readyz")
        print(json.dumps({"status": status, "contentType": content_type, "types": types, "samples": samples,
                          "healthz": get("/healthz")[0], "readyz": ready[0], "readyzBody": ready[1]}))
        """

    init(port: Int) throws {
        let output = try Python.run(Self.script, arguments: [String(port)])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        status = json["status"] as? Int ?? 0
        contentType = json["contentType"] as? String ?? ""
        types = json["types"] as? [String: String] ?? [:]
        samples = (json["samples"] as? [[Any]] ?? []).map { sample in
            Sample(
                name: sample[0] as? String ?? "", labels: sample[1] as? [String: String] ?? [:],
                value: (sample[2] as? NSNumber)?.doubleValue ?? .nan)
        }
        healthz = json["healthz"] as? Int ?? 0
        readyz = json["readyz"] as? Int ?? 0
        readyzBody = json["readyzBody"] as? String ?? ""
    }

    /// The value of the sample `name` with exactly `labels`.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// One GET: its status and body.
    static func status(port: Int, path: String) throws -> (code: Int, body: String) {
        let output = try Python.run(
            """
            import json, sys, urllib.request, urllib.error
            try:
                with urllib.request.urlopen("http://127.0.0.1:" + sys.argv[1] + sys.argv[2], timeout=10) as r:
                    print(json.dumps([r.status, r.read().decode()]))
            except urllib.error.HTTPError as e:
                print(json.dumps([e.code, e.read().decode()]))
            """, arguments: [String(port), path])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [Any])
        return (json[0] as? Int ?? 0, json[1] as? String ?? "")
    }

    /// Asks until `path` answers `code` (30 s at most): readiness is polled, as a load
    /// balancer does; nothing tells a client it changed.
    static func waitForStatus(port: Int, path: String, _ code: Int) throws -> (code: Int, body: String)? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let answer = try status(port: port, path: path)
            if answer.code == code { return answer }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return nil
    }
}

/// A TCP connection to `port` on loopback, connected (the kernel completes it even while the
/// server has not accepted it yet).
func loopbackConnection(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw DaemonError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else {
        close(fd)
        throw DaemonError("connect to \(port): errno \(errno)")
    }
    return fd
}

/// A loopback TCP port nothing listens on now.
func freePort() throws -> Int { try freeLoopbackPort() }
