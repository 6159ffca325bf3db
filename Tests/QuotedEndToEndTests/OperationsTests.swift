import Foundation
import TestSupport
import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("quoted end to end: systemd and hostile input", .serialized, .timeLimit(.minutes(5)))
struct OperationsTests {
    @Test("sd_notify: READY=1 once listening, WATCHDOG=1 at half WATCHDOG_USEC, STOPPING=1 on SIGTERM")
    func systemdNotifications() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString).sock")
            .path
        let listener = try NotifySocket(path: path)
        let daemon = try DaemonProcess(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"])
        var seen: [String] = []
        while !(seen.contains("READY=1") && seen.filter({ $0 == "WATCHDOG=1" }).count >= 2) {
            let datagram = try #require(listener.receive(timeoutMilliseconds: 10_000), "no notification; got \(seen)")
            seen += datagram.split(separator: "\n").map(String.init)
        }
        #expect(seen.contains { $0.hasPrefix("STATUS=listening on tcp://127.0.0.1:") })
        // Opening the store (which may migrate every row) asks systemd to wait, before READY.
        let extended = try #require(seen.firstIndex { $0.hasPrefix("EXTEND_TIMEOUT_USEC=") }, "got \(seen)")
        #expect(seen[extended] == "EXTEND_TIMEOUT_USEC=30000000")
        #expect(seen.contains("STATUS=opening the store (migrating it if needed)"))
        #expect(extended < seen.firstIndex(of: "READY=1")!)
        kill(daemon.process.processIdentifier, SIGTERM)
        while !seen.contains("STOPPING=1") {
            let datagram = try #require(listener.receive(timeoutMilliseconds: 10_000), "no STOPPING; got \(seen)")
            seen += datagram.split(separator: "\n").map(String.init)
        }
        #expect(daemon.stop() == 0)
        #expect(seen.firstIndex(of: "READY=1")! < seen.firstIndex(of: "STOPPING=1")!)
    }

    @Test("the daemon's threads carry names top -H, perf and /proc show: its I/O thread and its writer")
    func threadNames() throws {
        let daemon = try DaemonProcess()
        defer { _ = daemon.stop() }
        // Both run before "quoted ready": the writer since the store opened, the I/O thread logs it.
        let tasks = "/proc/\(daemon.process.processIdentifier)/task"
        let names = try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap {
            try? String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        }
        #expect(names.contains("quoted-io"), "\(names)")
        #expect(names.contains("quoted-writer"), "\(names)")
    }

    @Test(
        "malloc is mimalloc's in quoted, and quoted says so when something has put another first",
        arguments: [nil, "/lib/x86_64-linux-gnu/libc.so.6"])
    func allocator(preload: String?) throws {
        // glibc loaded ahead of quoted's libraries takes malloc back from mimalloc.
        let daemon = try DaemonProcess(environment: preload.map { ["LD_PRELOAD": $0] } ?? [:])
        defer { _ = daemon.stop() }
        // Read to its end: /proc gives the file no size to read up to.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/\(daemon.process.processIdentifier)/maps"))
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libmimalloc"))
        // Checked and logged before "quoted ready", which the daemon has logged.
        let warned = daemon.log.contains { $0.contains("malloc is not mimalloc's") }
        #expect(warned == (preload != nil), "\(daemon.log.prefix(20))")
    }

    @Test("invalid configuration fails fast with the key and reason, exit code 78")
    func invalidConfiguration() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = directory + "/quoted.yaml"
        try "endpoint: tcp://127.0.0.1:0\nmaxMessageBytes: lots\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted"))
        process.arguments = ["--config", file, "--state-dir", directory]
        let result = try process.runToEnd()
        let output = result.stderr
        #expect(result.status == 78)
        #expect(output.contains("maxMessageBytes"))
        #expect(output.contains("\"lots\" is not a whole number"))
    }

    @Test("quoted repair on a sound store repairs nothing, says so, and exits 0")
    func repairOfASoundStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("repair-\(UUID().uuidString)")
            .path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.path("quoted"))
        process.arguments = ["repair", "--state-dir", directory]
        let result = try process.runToEnd()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("repair finished repaired=0"), "\(result.stderr)")
    }

    @Test(
        "binding beyond loopback without security stops start-up with exit 78 naming the key; allowInsecure lets it bind",
        arguments: ["--endpoint", "--events"])
    func insecureBindRefused(flag: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bind-\(UUID().uuidString)").path
        let refused = try Binaries.run(
            "quoted", [flag, "tcp://0.0.0.0:0", "--state-dir", directory],
            environment: ProcessInfo.processInfo.environment)
        #expect(refused.status == 78)
        let key = flag == "--endpoint" ? "endpoint" : "events"
        #expect(refused.stderr.contains("invalid configuration: \(key): \"tcp://0.0.0.0:0\""), "\(refused.stderr)")
        #expect(refused.stderr.contains("allowInsecure"))
        let wide = "tcp://0.0.0.0:0"
        let daemon = try DaemonProcess(
            environment: ["QUOTED_ALLOW_INSECURE": "true"],
            endpoint: flag == "--endpoint" ? wide : "tcp://127.0.0.1:*",
            eventsEndpoint: flag == "--events" ? wide : "tcp://127.0.0.1:*")
        #expect(daemon.stop() == 0)
    }

    @Test("quoted keygen and quotectl keygen write a pair with the role, the secret mode 0600, and never overwrite one")
    func keygen() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        for (binary, name) in [("quoted", "server"), ("quotectl", "ann")] {
            let made = try Binaries.run(binary, ["keygen", name, "--role", "observer", "--dir", directory])
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.contains("\(directory)/\(name).key_secret"))
            let secret = try String(contentsOfFile: "\(directory)/\(name).key_secret", encoding: .utf8)
            #expect(secret.contains("role = \"observer\"") && secret.contains("secret-key = \""))
            let mode = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name).key_secret")[
                .posixPermissions]
            #expect((mode as? NSNumber)?.intValue == 0o600)
            let again = try Binaries.run(binary, ["keygen", name, "--dir", directory])
            #expect(again.status == 64, "an existing pair is a usage error")
            #expect(again.stderr.contains("--force"))
            #expect(try String(contentsOfFile: "\(directory)/\(name).key_secret", encoding: .utf8) == secret)
            let role = try Binaries.run(binary, ["keygen", "x", "--role", "admin", "--dir", directory])
            #expect(role.status == 64 && role.stderr.contains("unknown role"))
        }
    }

    @Test("thousands of malformed, truncated, random and oversized frames get errors while good clients are served")
    func hostileInput() throws {
        let daemon = try DaemonProcess(arguments: ["--max-message-bytes", "4096"])
        defer { #expect(daemon.stop() == 0) }
        let context = try Context()
        let good = try Client(context, endpoint: daemon.commands)
        var generator = SystemRandomNumberGenerator()
        let valid = Array(try JSONSerialization.data(withJSONObject: Requests.submit()))

        func round(_ number: Int) throws -> Int {
            var answered = 0
            for index in 0..<4 {
                let attacker = try Socket(context, type: .dealer)
                try attacker.set(.linger, 0)
                try attacker.set(.receiveTimeout, 20_000)
                try attacker.connect(daemon.commands)
                var frames: [[UInt8]] = []
                for n in 0..<500 {
                    switch n % 5 {
                    case 0:
                        frames.append(
                            (0..<Int.random(in: 1...300, using: &generator)).map { _ in
                                UInt8.random(in: 0...255, using: &generator)
                            })
                    case 1: frames.append(Array(valid.prefix(Int.random(in: 1..<valid.count, using: &generator))))
                    case 2: frames.append(Array(#"{"v":1,"op":"submit","customer":7,"services":"x"}"#.utf8))
                    case 3: frames.append([UInt8](repeating: UInt8(ascii: "{"), count: 5_000))
                    default: frames.append(Array(#"{"v":1,"op":"book","quoteId":-1}"#.utf8))
                    }
                }
                for frame in frames { try attacker.send(multipart: [[], frame]) }
                // Meanwhile the good client is served.
                let reply = try good.call(Requests.submit(key: "good-\(number)-\(index)"))
                #expect(reply["ok"] as? Bool == true)
                for _ in frames {
                    let message = try #require(try attacker.receiveMultipart())
                    let body = try JSONSerialization.jsonObject(with: Data(message.frames.last!)) as? [String: Any]
                    #expect(body?["ok"] as? Bool == false)
                    #expect(body?.errorCode != nil)
                    answered += 1
                }
            }
            // A peer sending frames far past the limit is cut off by libzmq, not buffered.
            let giant = try Socket(context, type: .dealer)
            try giant.set(.linger, 0)
            try giant.connect(daemon.commands)
            for _ in 0..<5 { try giant.send(multipart: [[], [UInt8](repeating: 65, count: 200_000)]) }
            #expect(try good.call(Requests.op("ping"))["pong"] as? Bool == true)
            return answered
        }

        #expect(try round(1) == 2_000)
        let afterFirst = daemon.residentKiB
        for number in 2...4 { #expect(try round(number) == 2_000) }
        let afterLast = daemon.residentKiB
        // Flat memory: later rounds of the same abuse do not grow the daemon.
        #expect(afterLast < afterFirst + 16_384, "RSS grew from \(afterFirst) KiB to \(afterLast) KiB")
        let stats = try good.call(Requests.op("stats"))
        #expect(stats[object: "counts"]?["ready"] as? Int == 16)
    }
}

/// A datagram socket standing in for systemd's notify socket.
final class NotifySocket: Sendable {
    let fd: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { throw DaemonError("cannot bind \(path)") }
    }

    func receive(timeoutMilliseconds: Int32) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeoutMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count), as: UTF8.self)
    }

    deinit {
        close(fd)
        unlink(path)
    }
}
