import Foundation
import TestSupport
import Testing
import ZeroMQ

/// A real quoted with `security`: a server certificate, an allow-list directory with one
/// client per role (and more as a test needs), and the keys of each, made as an operator would.
final class SecureDaemon {
    let directory: String
    let clientsDirectory: String
    let serverKey: [UInt8]
    private(set) var keys: [String: CurveKeyPair] = [:]
    private(set) var daemon: DaemonProcess!

    /// Writes the server certificate and a client certificate for each of `clients` (name and
    /// role), then starts quoted with `--server-key` and `--clients`.
    init(
        clients: [(name: String, role: String)], arguments: [String] = [], environment: [String: String] = [:]
    ) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("quoted-sec-\(UUID().uuidString)")
            .path
        clientsDirectory = directory + "/clients"
        let server = try Certificate.generate(metadata: ["name": "quoted"])
        _ = try server.save(named: "quoted", in: directory)
        serverKey = server.publicKey
        try FileManager.default.createDirectory(atPath: clientsDirectory, withIntermediateDirectories: true)
        for client in clients { try allow(client.name, role: client.role) }
        daemon = try DaemonProcess(
            stateDirectory: directory + "/state",
            arguments: ["--server-key", directory + "/quoted.key_secret", "--clients", clientsDirectory] + arguments,
            environment: environment)
    }

    /// Makes a key pair for `name` and lists its public certificate with `role`.
    @discardableResult
    func allow(_ name: String, role: String) throws -> CurveKeys {
        let certificate = try Certificate.generate(metadata: ["name": name, "role": role])
        _ = try certificate.publicCertificate.save(named: name, in: clientsDirectory)
        _ = try certificate.save(named: name, in: directory + "/keys")
        keys[name] = certificate.keyPair
        return try self.keys(name)
    }

    /// The secret certificate of a client `allow` made, as its owner keeps it.
    func secretFile(_ name: String) -> String { directory + "/keys/\(name).key_secret" }

    /// quoted's public certificate, as its clients are given it.
    var serverPublicFile: String { directory + "/quoted.key" }

    /// A key pair that the allow-list does not hold.
    func unlisted(_ name: String) throws -> CurveKeys {
        keys[name] = try CurveKeyPair.generate()
        return try self.keys(name)
    }

    /// What a client named `name` connects with.
    func keys(_ name: String) throws -> CurveKeys {
        CurveKeys(client: try #require(keys[name]), server: serverKey)
    }

    /// Withdraws `name`'s certificate from the allow-list (the file only: quoted reads it on SIGHUP).
    func revoke(_ name: String) throws {
        try FileManager.default.removeItem(atPath: clientsDirectory + "/\(name).key")
    }

    /// Sends SIGHUP and waits until quoted has reloaded its clients.
    func reload() throws {
        func reloads(_ log: [String]) -> Int { log.filter { $0.contains("clients reloaded") }.count }
        let before = reloads(daemon.log)
        kill(daemon.process.processIdentifier, SIGHUP)
        guard daemon.waitForLog(until: { reloads($0) > before }) else {
            throw DaemonError("no reload: \(daemon.log)")
        }
    }

    deinit {
        daemon?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// How a connection's handshake ended, as its own socket's monitor reports it.
enum Handshake: Equatable {
    case succeeded, failed
}

/// Connects a socket of `type` to `endpoint` with `curve` (plaintext without), sends `request`
/// (a DEALER) and waits for the handshake's outcome; returns it, and any reply that came
/// within `replyWait` after.
func attempt(
    _ context: Context, _ endpoint: String, type: SocketType = .dealer, curve: CurveKeys?,
    request: [String: Any]? = nil
) throws -> (handshake: Handshake, reply: [String: Any]?) {
    let socket = try Socket(context, type: type)
    try socket.set(.linger, 0)
    if type == .sub { try socket.set(.subscribe, []) }
    try curve?.configure(socket)
    let monitor = try socket.openMonitor(events: [.handshakeSucceeded, .handshakeFailed, .disconnected])
    // Stopped while its reader is open: an event sent to a closed reader would block the
    // context's I/O thread, and with it every other socket of the test.
    defer { socket.stopMonitor() }
    try monitor.set(.receiveTimeout, 20_000)
    try socket.connect(endpoint)
    if let request {
        // Never waiting: once a refused handshake has closed the only connection, a DEALER has
        // nowhere to queue the request and a blocking send would wait for good.
        _ = try socket.send(
            multipart: [[], Array(try JSONSerialization.data(withJSONObject: request))], dontWait: true)
    }
    let event = try #require(try monitor.receiveMonitorEvent(), "no handshake outcome within 20 s")
    let handshake: Handshake = event.event == .handshakeSucceeded ? .succeeded : .failed
    var reply: [String: Any]?
    if handshake == .succeeded, request != nil {
        var poller = Poller()
        poller.register(socket)
        if try poller.poll(timeout: .seconds(20)) > 0, let message = try socket.receiveMultipart(dontWait: true),
            let body = message.frames.last
        {
            reply = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        }
    }
    return (handshake, reply)
}

@Suite("Security: CURVE on both sockets, the allow-list and the roles", .serialized)
struct SecurityTests {
    /// What each role may do, from the issue: the expectation, written apart from quoted's table.
    static let allowed: [String: Set<String>] = [
        "operator": [
            "submit", "get", "list", "resolve", "book", "complete", "cancel", "mechanics", "services", "stats",
            "events", "ping", "waiting", "setDuty", "reassign", "addMechanic", "updateMechanic", "retireMechanic",
            "catalog", "applyCatalog",
        ],
        // Between observer and operator: everything read, the day's roster, not its membership.
        "support": [
            "get", "list", "resolve", "book", "cancel", "mechanics", "services", "stats", "events", "ping", "waiting",
            "setDuty", "reassign", "catalog",
        ],
        "client": ["submit", "get", "book", "cancel", "services", "ping"],
        "observer": ["get", "list", "stats", "mechanics", "services", "events", "ping", "waiting", "catalog"],
    ]

    @Test("a plaintext client and a CURVE client with an unlisted key get no reply and change nothing")
    func strangersGetNothing() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator")])
        let context = try Context()
        let plaintext = try attempt(context, secure.daemon.commands, curve: nil, request: Requests.submit())
        #expect(plaintext.handshake == .failed)
        let stranger = try attempt(
            context, secure.daemon.commands, curve: try secure.unlisted("mallory"), request: Requests.submit())
        #expect(stranger.handshake == .failed)
        #expect(try attempt(context, secure.daemon.events, type: .sub, curve: nil).handshake == .failed)
        #expect(
            try attempt(context, secure.daemon.events, type: .sub, curve: try secure.keys("mallory")).handshake
                == .failed)

        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        let stats = try ops.call(Requests.op("stats"))
        #expect(stats["ok"] as? Bool == true)
        #expect(stats["lastSeq"] as? Int == 0, "nothing was submitted: \(stats)")
        #expect(
            secure.daemon.waitForLog {
                $0.contains { $0.contains("connection refused: key not in the clients directory") }
            })
    }

    @Test(
        "every operation, for every role: allowed ones work, the others are forbidden and change nothing",
        arguments: ["operator", "support", "client", "observer"])
    func roleMatrix(_ role: String) throws {
        let secure = try SecureDaemon(clients: [("ops", "operator"), ("caller", role)])
        let context = try Context()
        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        let caller = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("caller"))
        let allowed = try #require(Self.allowed[role])
        // The quotes each operation acts on: the caller's own when it may submit.
        func own(_ request: [String: Any]) throws -> Int {
            try (allowed.contains("submit") ? caller.call(request) : ops.call(request)).quoteID
        }
        let ready = try own(Requests.submit(key: "ready"))
        let booked = try own(Requests.submit(key: "booked", book: true))
        let spare = try own(Requests.submit(key: "spare"))
        let pending = try own(Requests.submit(trim: nil, key: "pending"))
        var catalog = try #require(try ops.call(Requests.op("catalog"))["catalog"] as? [String: Any])
        var services = catalog["services"] as? [[String: Any]] ?? []
        services[0]["price"] = "99.00"
        catalog["services"] = services

        let requests: [(op: String, request: [String: Any])] = [
            ("ping", Requests.op("ping")),
            ("services", Requests.op("services")),
            ("mechanics", Requests.op("mechanics")),
            ("stats", Requests.op("stats")),
            ("list", Requests.op("list")),
            ("events", Requests.op("events", ["since": 0])),
            ("waiting", Requests.op("waiting")),
            ("get", Requests.op("get", ["quoteId": ready])),
            ("submit", Requests.submit(name: "Jane Roe", key: "matrix")),
            ("resolve", Requests.op("resolve", ["quoteId": pending, "trim": "EX"])),
            ("book", Requests.op("book", ["quoteId": ready])),
            // On duty already: allowed, it changes nothing.
            ("setDuty", Requests.op("setDuty", ["mechanic": "Joe Murphy", "onDuty": true])),
            ("reassign", Requests.op("reassign", ["quoteId": booked])),
            ("complete", Requests.op("complete", ["quoteId": booked])),
            ("cancel", Requests.op("cancel", ["quoteId": spare, "reason": "matrix"])),
            ("catalog", Requests.op("catalog")),
            ("addMechanic", Requests.op("addMechanic", ["name": "Matrix Hand", "skill": "junior"])),
            ("updateMechanic", Requests.op("updateMechanic", ["mechanic": "Matrix Hand", "skill": "master"])),
            ("retireMechanic", Requests.op("retireMechanic", ["mechanic": "Matrix Hand"])),
            ("applyCatalog", Requests.op("applyCatalog", ["catalog": catalog])),
        ]
        #expect(Set(requests.map(\.op)).count == 20, "every operation of the protocol")
        for (op, request) in requests {
            let before = try ops.call(Requests.op("stats"))["lastSeq"] as? Int
            let reply = try caller.call(request)
            if allowed.contains(op) {
                #expect(reply["ok"] as? Bool == true, "\(role) may \(op): \(reply)")
            } else {
                #expect(reply.errorCode == "forbidden", "\(role) may not \(op): \(reply)")
                let message = reply[object: "error"]?["message"] as? String ?? ""
                #expect(message.contains(role) && message.contains("\"\(op)\""), "\(message)")
                #expect(try ops.call(Requests.op("stats"))["lastSeq"] as? Int == before, "\(op) changed nothing")
            }
        }
    }

    @Test("a client sees and acts on its own quotes only; quotes and events record who did what")
    func clientsOwnTheirQuotes() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator"), ("alice", "client"), ("bob", "client")])
        let context = try Context()
        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        let alice = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("alice"))
        let bob = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("bob"))

        let submitted = try alice.call(Requests.submit(key: "same-key"))
        let id = submitted.quoteID
        #expect(submitted.quote?["submittedBy"] as? String == "alice")
        for request in [
            Requests.op("get", ["quoteId": id]), Requests.op("book", ["quoteId": id]),
            Requests.op("cancel", ["quoteId": id]),
        ] {
            #expect(try bob.call(request).errorCode == "unknown_quote", "\(request)")
        }
        // The same idempotency key is bob's own: a new quote, not alice's.
        let bobs = try bob.call(Requests.submit(key: "same-key"))
        #expect(bobs.quoteID != id)
        #expect(bobs["replayed"] == nil)
        #expect(try alice.call(Requests.submit(key: "same-key"))["replayed"] as? Bool == true)

        #expect(try alice.call(Requests.op("book", ["quoteId": id])).quote?["state"] as? String == "booked")
        #expect(try ops.call(Requests.op("complete", ["quoteId": id])).quote?["state"] as? String == "completed")
        let stored = try ops.call(Requests.op("get", ["quoteId": id]))
        #expect(stored.quote?["submittedBy"] as? String == "alice")

        let events = try #require(try ops.call(Requests.op("events", ["since": 0]))["events"] as? [[String: Any]])
        let byQuote = events.filter { $0["quoteId"] as? Int == id }.map { ($0["type"] as? String, $0["by"] as? String) }
        #expect(
            byQuote.map(\.0) == [
                "quote.submitted", "quote.ready", "quote.booked", "mechanic.busy", "quote.completed", "mechanic.free",
            ])
        #expect(byQuote.map(\.1) == ["alice", "alice", "alice", "alice", "ops", "ops"])
    }

    @Test("a subscriber with a client key receives no event; an observer's and an operator's receive them all")
    func onlyReadersSubscribe() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator"), ("app", "client"), ("watcher", "observer")])
        let context = try Context()
        #expect(
            try attempt(context, secure.daemon.events, type: .sub, curve: try secure.keys("app")).handshake == .failed)
        let watcher = try Subscriber(context, endpoint: secure.daemon.events, curve: try secure.keys("watcher"))
        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        // The subscription is in place once a first event arrives.
        var seqs: [Int] = []
        while seqs.isEmpty {
            _ = try ops.call(Requests.submit())
            if let event = try watcher.next(timeout: .milliseconds(200)) {
                seqs.append(event.body["seq"] as? Int ?? -1)
            }
        }
        for _ in 0..<5 { _ = try ops.call(Requests.submit(book: true)) }
        let last = try #require(try ops.call(Requests.op("stats"))["lastSeq"] as? Int)
        while seqs.last! < last {
            let event = try #require(try watcher.next(), "the observer missed events after \(seqs.last!)")
            seqs.append(event.body["seq"] as? Int ?? -1)
        }
        #expect(seqs == Array(seqs.first!...last), "every event, in order, with no gap")
        #expect(secure.daemon.waitForLog { $0.contains { $0.contains("role client may not subscribe to events") } })
    }

    @Test("a key removed from the directory is refused after SIGHUP: new connections, open ones, subscriptions")
    func revokedOnReload() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator"), ("alice", "client"), ("watcher", "observer")])
        let context = try Context()
        let alice = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("alice"))
        #expect(try alice.call(Requests.submit())["ok"] as? Bool == true)
        let ops = try Client(context, endpoint: secure.daemon.commands, curve: try secure.keys("ops"))
        // The watcher's subscription, with its own monitor to see it dropped.
        let watcher = try Socket(context, type: .sub)
        try watcher.set(.linger, 0)
        try watcher.set(.subscribe, [])
        try secure.keys("watcher").configure(watcher)
        let monitor = try watcher.openMonitor(events: [.disconnected, .handshakeFailed])
        defer { watcher.stopMonitor() }
        try monitor.set(.receiveTimeout, 20_000)
        try watcher.connect(secure.daemon.events)
        var poller = Poller()
        poller.register(watcher)
        while try poller.poll(timeout: .milliseconds(200)) == 0 { _ = try ops.call(Requests.submit()) }

        try secure.revoke("alice")
        try secure.revoke("watcher")
        try secure.reload()

        let refused = try alice.call(Requests.submit(name: "After Revocation"))
        #expect(refused.errorCode == "forbidden", "\(refused)")
        #expect(
            try attempt(context, secure.daemon.commands, curve: try secure.keys("alice"), request: Requests.submit())
                .handshake == .failed)
        // The subscription is dropped, and coming back, the watcher is refused.
        #expect(try monitor.receiveMonitorEvent()?.event == .disconnected)
        let next = try #require(try monitor.receiveMonitorEvent())
        #expect(MonitorEvents.handshakeFailed.contains(next.event), "\(next)")
        let list = try #require(try ops.call(Requests.op("list"))["quotes"] as? [[String: Any]])
        #expect(!list.contains { ($0["customer"] as? [String: Any])?["name"] as? String == "After Revocation" })
        // The operator was never refused, and still hears events, on the socket bound again.
        #expect(try ops.call(Requests.op("ping"))["ok"] as? Bool == true)
        #expect(
            try attempt(context, secure.daemon.events, type: .sub, curve: try secure.keys("ops")).handshake
                == .succeeded)
        let subscriber = try Subscriber(context, endpoint: secure.daemon.events, curve: try secure.keys("ops"))
        let heard = try subscriber.hear(through: ops, more: 3) { _ = try ops.call(Requests.submit()) }
        #expect(try heardAsLogged(heard, ops))
    }

    @Test("a pyzmq client with keys from zmq.auth.create_certificates and a role in its certificate works")
    func pyzmqClient() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator")])
        let script = """
            import json, os, sys, zmq, zmq.auth
            directory, clients, server_public, endpoint = sys.argv[1:5]
            public, secret = zmq.auth.create_certificates(directory, "pyclient")
            # pyzmq writes metadata into the secret file only: the public one for quoted, with a role.
            key = zmq.auth.load_certificate(public)[0].decode()
            with open(os.path.join(clients, "pyclient.key"), "w") as listed:
                listed.write('metadata\\n    role = "client"\\ncurve\\n    public-key = "%s"\\n' % key)
            print(json.dumps({"key": key}), flush=True)
            sys.stdin.readline()  # quoted reloads its clients
            context = zmq.Context()
            socket = context.socket(zmq.DEALER)
            client_public, client_secret = zmq.auth.load_certificate(secret)
            socket.curve_publickey, socket.curve_secretkey = client_public, client_secret
            socket.curve_serverkey, _ = zmq.auth.load_certificate(server_public)
            socket.connect(endpoint)
            request = {"v": 1, "op": "submit", "id": 1, "customer": {"name": "Py Thon", "email": "py@example.com",
                "address": "1 Main St"}, "car": {"make": "Honda", "model": "Civic", "year": 2014, "trim": "EX"},
                "services": ["Oil Change"]}
            socket.send_multipart([b"", json.dumps(request).encode()])
            if not socket.poll(20000):
                sys.exit("no reply")
            print(socket.recv_multipart()[-1].decode())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Python.executable)
        process.arguments = [
            "-c", script, secure.directory, secure.clientsDirectory, secure.directory + "/quoted.key",
            secure.daemon.commands,
        ]
        let input = Pipe.forChild()
        let output = Pipe.forChild()
        process.standardInput = input
        process.standardOutput = output
        let errors = Pipe.forChild()
        process.standardError = errors
        try process.spawn()
        let lines = output.fileHandleForReading
        var buffer = Data()
        func line() -> String {
            while !buffer.contains(UInt8(ascii: "\n")) {
                let chunk = lines.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
            }
            let end = buffer.firstIndex(of: UInt8(ascii: "\n")) ?? buffer.endIndex
            defer { buffer = Data(buffer[min(end + 1, buffer.endIndex)...]) }
            return String(decoding: buffer[..<end], as: UTF8.self)
        }
        let first = line()
        let created = try #require(
            try? JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any],
            "\(first) \(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))")
        let key = try #require(created["key"] as? String)
        try secure.reload()
        input.fileHandleForWriting.write(Data("go\n".utf8))
        let reply = try #require(
            try JSONSerialization.jsonObject(with: Data(line().utf8)) as? [String: Any], "pyzmq got no reply")
        try #require(process.waitUntilExit(within: .seconds(60)), "the pyzmq client ended")
        #expect(process.terminationStatus == 0)
        #expect(reply["ok"] as? Bool == true, "\(reply)")
        #expect(reply.quote?["state"] as? String == "ready")
        #expect(reply.quote?["submittedBy"] as? String == key, "a certificate without a name is known by its key")
    }

    @Test(
        "quotectl connects with --key and --server-key or QUOTED_KEY and QUOTED_SERVER_KEY, keys from quotectl keygen")
    func quotectlWithKeys() throws {
        let secure = try SecureDaemon(clients: [("ops", "operator")])
        let keys = secure.directory + "/support"
        let made = try Quotectl.run(["keygen", "support", "--role", "observer", "--dir", keys])
        #expect(made.status == 0, "\(made.stderr)")
        try FileManager.default.copyItem(
            atPath: keys + "/support.key", toPath: secure.clientsDirectory + "/support.key")
        try secure.reload()

        let endpoints = Quotectl.environment(secure.daemon)
        var operatorEnvironment = endpoints
        operatorEnvironment["QUOTED_KEY"] = secure.secretFile("ops")
        operatorEnvironment["QUOTED_SERVER_KEY"] = secure.serverPublicFile
        let watcher = try Watcher(["--json"], environment: operatorEnvironment)
        defer { watcher.stop() }
        try watcher.waitUntilFollowing()

        let support = ["--key", keys + "/support.key_secret", "--server-key", secure.serverPublicFile]
        let submitted = try Quotectl.run(
            [
                "submit", "--json", "--name", "John Lee", "--email", "john.lee@example.com", "--address",
                "12 Elm Street", "--make", "Toyota", "--model", "Camry", "--year", "2015", "--trim", "LE",
                "--service", "Oil Change",
            ], environment: operatorEnvironment)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = try #require(try submitted.json()["quote"] as? [String: Any])["id"] as? Int
        let shown = try Quotectl.run(["get", "\(try #require(id))"] + support, environment: endpoints)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("Submitter ops"), "\(shown.stdout)")
        let cancelled = try Quotectl.run(["cancel", "\(try #require(id))"] + support, environment: endpoints)
        #expect(cancelled.status == 1)
        #expect(cancelled.stderr.contains("forbidden") && cancelled.stderr.contains("observer"), "\(cancelled.stderr)")

        #expect(watcher.wait { stdout, _ in stdout.count >= 2 }, "\(watcher.stderr)")
        let events = try watcher.events()
        #expect(events.prefix(2).map { $0["by"] as? String } == ["ops", "ops"])

        let keyless = try Quotectl.run(["stats", "--timeout", "1"], environment: endpoints)
        #expect(keyless.status == 69)
        #expect(keyless.stderr.contains("give --key and --server-key"), "\(keyless.stderr)")
    }
}
