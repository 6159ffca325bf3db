import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a person sees: `quotectl watch` in one tmux pane while another pane submits, books
/// and completes. The watcher pane's screen is compared with a committed fixture.
@Suite("quotectl watch on a real terminal", .serialized, .timeLimit(.minutes(3)))
struct TmuxTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/watch-tmux.txt")

    @Test("In tmux, watch prints each change as a coloured line while the other pane works")
    func watchInTmux() throws {
        let daemon = try DaemonProcess()
        defer { #expect(daemon.stop() == 0) }
        let tmux = try Tmux()
        defer { tmux.kill() }
        let ctl = Binaries.path("quotectl")
        let env = "QUOTED_ENDPOINT=\(daemon.commands) QUOTED_EVENTS=\(daemon.events)"
        _ = try tmux.run(["new-session", "-d", "-s", "watch", "-x", "200", "-y", "30", "env \(env) \(ctl) watch"])
        _ = try tmux.run(["set-option", "-t", "watch", "remain-on-exit", "on"])
        _ = try #require(tmux.waitFor(pane: "watch:0.0") { $0.contains("quotectl: watching") })

        let work = [
            "\(ctl) submit --name 'John Lee' --email john.lee@example.com --address '12 Elm Street'"
                + " --make Toyota --model Camry --year 2015 --trim LE --service 'Oil Change'"
                + " --service 'Brake Inspection' --mechanic 'Joe Murphy' --book",
            "\(ctl) complete 1",
        ].map { "env \(env) \($0)" }.joined(separator: " && ")
        _ = try tmux.run(["split-window", "-t", "watch:0", "-v", work])

        let screen = tmux.waitFor(pane: "watch:0.0") { $0.contains("mechanic.free") }
        let plain = try #require(screen, "the watcher pane never showed the whole flow")
        // A subscription takes a moment to reach the daemon (ZeroMQ's slow joiner): when the
        // first events were published before it did, watch says so and replays them from the
        // log. Either way every event shows once, in order: the notice is the only difference.
        let normalized = Self.normalize(plain).replacingOccurrences(
            of: #"(?m)^quotectl: missed events #1-#\d+ live; replaying them\n"#, with: "",
            options: .regularExpression)
        if let expected = try? String(contentsOf: Self.fixture, encoding: .utf8) {
            #expect(normalized == expected, "screen differs from Fixtures/watch-tmux.txt:\n\(normalized)")
        } else {
            Issue.record("no fixture yet; wrote \(Self.fixture.path)")
            try normalized.write(to: Self.fixture, atomically: true, encoding: .utf8)
        }
        let coloured = try tmux.capture(pane: "watch:0.0", escapes: true)
        #expect(coloured.contains("\u{1B}["), "a terminal gets colour")
        // The watcher can show the completion's events before `quotectl complete`, in the other
        // pane, has printed its reply: wait for that.
        let worker = tmux.waitFor(pane: "watch:0.1", history: true) { $0.contains("Receipt for John Lee") }
        #expect(worker?.contains("Your appointment has been booked with Joe Murphy.") == true, "\(worker ?? "")")
        #expect(worker != nil, "the worker pane never showed the receipt")
    }

    /// Replaces what changes from run to run (times, ports) with placeholders.
    static func normalize(_ screen: String) -> String {
        var text = screen.replacingOccurrences(
            of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"#, with: "<time>", options: .regularExpression)
        text = text.replacingOccurrences(of: #"tcp://127\.0\.0\.1:\d+"#, with: "<events>", options: .regularExpression)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.reversed().drop { $0 == " " }.reversed())
        }
        return lines.reversed().drop { $0.isEmpty }.reversed().joined(separator: "\n") + "\n"
    }
}

/// A private tmux server on its own socket, run in the foreground (`tmux -D`) as our child.
///
/// The server is spawned by hand rather than through Foundation's `Process`, for two reasons.
/// `Process` learns that a child exited when every copy of a socket it hands the child is
/// closed, and a tmux server keeps such copies open for as long as it lives. And the test
/// runner's signal mask and dispositions would be inherited: a tmux server with `SIGCHLD`
/// blocked never notices that a pane's command ended. So the server starts with an empty
/// signal mask, default handlers, and only stdin, stdout and stderr open.
final class Tmux {
    let directory: URL
    let socket: String
    private let server: pid_t

    /// Starts the server and waits until its socket accepts clients.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tmux-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socket = directory.appendingPathComponent("socket").path
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        environment.removeValue(forKey: "NO_COLOR")
        environment.removeValue(forKey: "TMUX")
        server = try Self.spawn(
            ["/usr/bin/tmux", "-D", "-f", "/dev/null", "-S", socket],
            environment: environment.map { "\($0.key)=\($0.value)" })
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? run(["list-sessions", "-F", "#{session_name}"])) == nil {
            guard ContinuousClock.now < deadline else { throw DaemonError("tmux server did not start on \(socket)") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    private static func spawn(_ arguments: [String], environment: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        // The descriptors listed and the child started with no other child started meanwhile
        // (Tests/TestSupport/Spawn.swift says why).
        let status = withSpawnLock {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
                posix_spawn_file_actions_addclose(&actions, descriptor)
            }
            return posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        }
        guard status == 0 else {
            throw DaemonError("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// Runs one tmux client command against this server and returns what it printed.
    func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tmux", "-f", "/dev/null", "-S", socket] + arguments
        let result = try process.runToEnd(within: .seconds(30))
        guard result.exited, result.status == 0 else {
            throw DaemonError("tmux \(arguments): \(result.stdout)\(result.stderr)")
        }
        return result.stdout
    }

    /// The pane's visible screen, or with `history` everything it printed, optionally with
    /// its colour escapes.
    func capture(pane: String, escapes: Bool, history: Bool = false) throws -> String {
        try run(["capture-pane", "-p", "-J", "-t", pane] + (escapes ? ["-e"] : []) + (history ? ["-S", "-"] : []))
    }

    /// Polls the pane's screen (with `history`, all it has shown) until `condition` holds
    /// (tmux offers no change notification a test can wait on); returns it, or `nil` after 30 s.
    func waitFor(pane: String, history: Bool = false, _ condition: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let screen = try? capture(pane: pane, escapes: false, history: history), condition(screen) {
                return screen
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    /// Stops every pane and the server, and removes the socket directory.
    func kill() {
        if (try? run(["kill-server"])) == nil { Glibc.kill(server, SIGTERM) }
        var status: Int32 = 0
        while waitpid(server, &status, 0) == -1 && errno == EINTR {}
        try? FileManager.default.removeItem(at: directory)
    }
}
