public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL cluster from Debian's `postgresql`, for the tests of one process:
/// `initdb` into a temporary directory, started on a free loopback port, stopped and removed
/// when the process exits. PostgreSQL refuses to run as root, so under root (CI) its programs
/// run as the `postgres` system user.
public final class PostgresCluster: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    private let directory: String
    private let binaries: String
    /// Whether it started as a standby (it says "ready to accept read-only connections").
    private let isStandby: Bool
    /// The running server's process id (the postmaster) and its output; `nil` while stopped.
    private let server = Mutex<(pid: pid_t, output: ServerOutput)?>(nil)
    private static let shared = Mutex<Result<PostgresCluster, ClusterError>?>(nil)
    /// Every cluster started, stopped at exit.
    private static let all = Mutex<[PostgresCluster]>([])

    /// The process's cluster, started on first use.
    public static func start() throws -> PostgresCluster {
        try shared.withLock { shared in
            if let shared { return try shared.get() }
            let result = Result { () throws(ClusterError) in try PostgresCluster() }
            shared = result
            return try result.get()
        }
    }

    /// A cluster of the caller's own, for a test that stops and starts its server.
    public static func startPrivate() throws -> PostgresCluster {
        try PostgresCluster()
    }

    /// A primary and a streaming standby of it (`pg_basebackup -R`), both the caller's own,
    /// replicating synchronously: `synchronous_standby_names = '*'` and `synchronous_commit =
    /// on`, so that a commit the primary acknowledges is on the standby too. Returns once the
    /// standby is in sync.
    public static func startReplicated() throws -> (primary: PostgresCluster, standby: PostgresCluster) {
        let primary = try PostgresCluster()
        let standby = try PostgresCluster(standbyOf: primary)
        _ = try primary.sql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        _ = try primary.sql("ALTER SYSTEM SET synchronous_commit = on")
        _ = try primary.sql("SELECT pg_reload_conf()")
        let deadline = ContinuousClock.now + .seconds(60)
        while try primary.sql("SELECT sync_state FROM pg_stat_replication") != "sync" {
            guard ContinuousClock.now < deadline else { throw ClusterError("the standby never reached sync") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return (primary, standby)
    }

    /// Runs `command` with psql in `database`; its output, unaligned, without headers.
    public func sql(_ command: String, database: String = "postgres") throws -> String {
        try Self.run(binaries + "/psql", psqlArguments(command, database: database), asPostgres: false)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// psql's arguments to run `command` in `database`, its output unaligned, without headers.
    private func psqlArguments(_ command: String, database: String) -> [String] {
        ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-d", database, "-qAt", "-c", command]
    }

    /// Starts psql running `command` in `database` in the background, as another session
    /// would (one holding a lock, say); the caller ends it. Its output is dropped.
    public func session(_ command: String, database: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binaries + "/psql")
        process.arguments = psqlArguments(command, database: database)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.spawn()
        return process
    }

    /// Kills the server with SIGKILL, as a host's loss would: no shutdown, no checkpoint.
    ///
    /// Every process of it at once, not the postmaster alone: its children (a standby's WAL
    /// receiver, which confirms the primary's commits) would otherwise live on until they
    /// noticed, and could confirm one more. The postmaster is stopped first, so that it
    /// starts no child meanwhile.
    public func crash() {
        guard
            let (pid, _) = server.withLock({ server in
                defer { server = nil }
                return server
            })
        else { return }
        kill(pid, SIGSTOP)
        for child in Self.children(of: pid) { kill(child, SIGKILL) }
        kill(pid, SIGKILL)
    }

    /// The processes whose parent is `pid`, from `/proc`.
    private static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // `pid (comm) state ppid ...`: the name may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }

    /// Promotes this standby to primary (`pg_ctl promote -w`): it accepts writes once this returns.
    public func promote() throws {
        try Self.run(binaries + "/pg_ctl", ["promote", "-w", "-D", directory + "/data"], asPostgres: true)
    }

    /// A new, empty database; its URL (`postgresql://postgres@127.0.0.1:PORT/NAME`).
    public func createDatabase() throws -> String {
        let name = "quoted_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        try Self.run(
            binaries + "/psql",
            ["-h", "127.0.0.1", "-p", "\(port)", "-U", "postgres", "-q", "-c", "CREATE DATABASE \(name)"],
            asPostgres: false)
        return "postgresql://postgres@127.0.0.1:\(port)/\(name)"
    }

    private init(standbyOf primary: PostgresCluster? = nil) throws(ClusterError) {
        guard let binaries = Self.binaries() else {
            throw ClusterError("no PostgreSQL server under /usr/lib/postgresql (scripts/setup installs it)")
        }
        self.binaries = binaries
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("quoted-pg-\(UUID().uuidString)")
            .path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if getuid() == 0 {
                try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: directory)
            }
        } catch {
            throw ClusterError("cannot make \(directory): \(error)")
        }
        port = try Self.freePort()
        isStandby = primary != nil
        do {
            if let primary {
                try Self.run(
                    binaries + "/pg_basebackup",
                    [
                        "-h", "127.0.0.1", "-p", "\(primary.port)", "-U", "postgres", "-D", directory + "/data", "-R",
                        "-X", "stream", "--no-sync",
                    ],
                    asPostgres: true)
            } else {
                try Self.run(
                    binaries + "/initdb",
                    ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
                    asPostgres: true)
            }
            try startServer()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw ClusterError("cannot start PostgreSQL: \(error)")
        }
        let first = Self.all.withLock { all in
            all.append(self)
            return all.count == 1
        }
        if first { atexit { PostgresCluster.stopAll() } }
    }

    /// Starts the server and waits until it accepts connections.
    public func startServer() throws(ClusterError) {
        // The server is this process's own child, not pg_ctl's: Foundation's `Process` watches
        // a child through a descriptor the child inherits, and a server started in the
        // background by pg_ctl would inherit it too and keep it open.
        let process = Process()
        let arguments = [
            "-D", directory + "/data", "-p", "\(port)", "-c", "listen_addresses=127.0.0.1", "-k", directory,
            "-c", "fsync=off", "-c", "max_connections=300",
        ]
        if getuid() == 0 {
            // setpriv execs the server as postgres in place: its pid is the server's.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=postgres", "--regid=postgres", "--init-groups", binaries + "/postgres"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binaries + "/postgres")
            process.arguments = arguments
        }
        let output = ServerOutput()
        let pipe = Pipe.forChild()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        output.read(pipe.fileHandleForReading)
        do {
            try process.spawn()
        } catch {
            throw ClusterError("cannot run postgres: \(error)")
        }
        let pid = process.processIdentifier
        let ready = isStandby ? "ready to accept read-only connections" : "ready to accept connections"
        guard output.wait(for: ready, timeout: 60) else {
            kill(pid, SIGQUIT)
            throw ClusterError("the server did not start: \(output.text)")
        }
        server.withLock { $0 = (pid, output) }
    }

    /// Stops the server with a fast shutdown (as `pg_ctl -m fast` does: sessions are ended,
    /// nothing committed is lost) and waits until it is down.
    public func stopServer() throws(ClusterError) {
        guard
            let (pid, output) = server.withLock({ server in
                defer { server = nil }
                return server
            })
        else { return }
        kill(pid, SIGINT)
        guard output.wait(for: "database system is shut down", timeout: 60) else {
            throw ClusterError("the server did not stop: \(output.text)")
        }
        // The server's last act is removing its pid file (what pg_ctl waits for too): after
        // that, its port is free for the next start.
        let pidFile = directory + "/data/postmaster.pid"
        let deadline = ContinuousClock.now + .seconds(30)
        while FileManager.default.fileExists(atPath: pidFile) {
            guard ContinuousClock.now < deadline else { throw ClusterError("the server did not exit: \(output.text)") }
            output.waitForMore(timeout: 0.05)
        }
    }

    /// At exit: stops every server with a signal (SIGQUIT, PostgreSQL's immediate shutdown),
    /// as `pg_ctl -m immediate` would; Foundation's `Process` cannot be waited on this late.
    private static func stopAll() {
        for cluster in all.withLock({ $0 }) {
            if let (pid, _) = cluster.server.withLock({ $0 }) {
                // The server is this process's child (setpriv execs it in place): wait for it to
                // exit (unless Foundation has reaped it already), on a thread of its own, for ten
                // seconds at most; then SIGKILL, so that the test run always ends.
                let exited = DispatchSemaphore(value: 0)
                Thread {
                    var status: Int32 = 0
                    _ = waitpid(pid, &status, 0)
                    exited.signal()
                }.start()
                kill(pid, SIGQUIT)
                if exited.wait(timeout: .now() + 10) == .timedOut {
                    kill(pid, SIGKILL)
                    exited.wait()
                }
            }
            try? FileManager.default.removeItem(atPath: cluster.directory)
        }
    }

    /// The newest installed server's programs.
    private static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "\(root)/\($0)/bin" }
    }

    /// A TCP port free on loopback at this moment.
    private static func freePort() throws(ClusterError) -> Int {
        do {
            return try freeLoopbackPort()
        } catch {
            throw ClusterError("\(error)")
        }
    }

    @discardableResult
    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws(ClusterError) -> String {
        let process = Process()
        if asPostgres && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        // Files, not pipes (`runToEnd`): the server pg_ctl starts inherits the descriptors and
        // keeps them open, and a pipe would never reach its end.
        let result: ChildResult
        do {
            result = try process.runToEnd(within: .seconds(120))
        } catch {
            throw ClusterError("\(program): \(error)")
        }
        guard result.exited, result.status == 0 else {
            throw ClusterError(
                "\(program) \(arguments.joined(separator: " ")) \(result.exited ? "exited \(result.status)" : "ran for two minutes; killed"): \(result.stdout)\(result.stderr)"
            )
        }
        return result.stdout
    }

    /// The cluster could not be made or used.
    public struct ClusterError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A server's output, read on a thread of its own to the end (so that the server never blocks
/// on it); waiters wake as it arrives.
final class ServerOutput: Sendable {
    private let state = Mutex((text: "", ended: false))
    private let arrived = DispatchSemaphore(value: 0)

    var text: String { state.withLock { $0.text } }

    func read(_ handle: FileHandle) {
        Thread { [self] in
            while true {
                let data = handle.availableData
                state.withLock { state in
                    if data.isEmpty { state.ended = true } else { state.text += String(decoding: data, as: UTF8.self) }
                }
                arrived.signal()
                if data.isEmpty { break }
            }
        }.start()
    }

    /// Waits until the output contains `line`; `false` after `timeout` seconds without it.
    func wait(for line: String, timeout: Double) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while true {
            let (found, ended) = state.withLock { ($0.text.contains(line), $0.ended) }
            if found { return true }
            if ended { return false }
            guard arrived.wait(timeout: deadline) == .success else { return false }
        }
    }

    /// Waits for more output, at most `timeout` seconds.
    func waitForMore(timeout: Double) {
        _ = arrived.wait(timeout: .now() + timeout)
    }
}
