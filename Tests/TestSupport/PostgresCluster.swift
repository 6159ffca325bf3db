import Foundation
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
    /// The server's process id (the postmaster).
    private let serverPID: pid_t
    private static let shared = Mutex<Result<PostgresCluster, ClusterError>?>(nil)

    /// The process's cluster, started on first use.
    public static func start() throws -> PostgresCluster {
        try shared.withLock { shared in
            if let shared { return try shared.get() }
            let result = Result { () throws(ClusterError) in try PostgresCluster() }
            shared = result
            if case .success = result { atexit { PostgresCluster.stopShared() } }
            return try result.get()
        }
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

    private init() throws(ClusterError) {
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
        var started: pid_t?
        do {
            try Self.run(
                binaries + "/initdb",
                ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
                asPostgres: true)
            // The server is this process's own child, not pg_ctl's: Foundation's `Process`
            // watches a child through a descriptor the child inherits, and a server started in
            // the background by pg_ctl would inherit it too and keep it open.
            let server = Process()
            let arguments = [
                "-D", directory + "/data", "-p", "\(port)", "-c", "listen_addresses=127.0.0.1", "-k", directory,
                "-c", "fsync=off", "-c", "max_connections=300",
            ]
            if getuid() == 0 {
                // setpriv execs the server as postgres in place: its pid is the server's.
                server.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                server.arguments =
                    ["--reuid=postgres", "--regid=postgres", "--init-groups", binaries + "/postgres"] + arguments
            } else {
                server.executableURL = URL(fileURLWithPath: binaries + "/postgres")
                server.arguments = arguments
            }
            // Its log comes through a pipe, read on a thread of its own to the end (so the
            // server never blocks on it); the line saying it accepts connections is the signal.
            let output = Pipe()
            server.standardOutput = output
            server.standardError = output
            server.standardInput = FileHandle.nullDevice
            server.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
            let ready = DispatchSemaphore(value: 0)
            let log = Mutex("")
            let reader = output.fileHandleForReading
            Thread {
                var signalled = false
                while true {
                    let data = reader.availableData
                    if data.isEmpty { break }
                    let text = log.withLock { log in
                        log += String(decoding: data, as: UTF8.self)
                        return log
                    }
                    if !signalled && text.contains("ready to accept connections") {
                        signalled = true
                        ready.signal()
                    }
                }
                if !signalled { ready.signal() }  // the server ended before it was ready
            }.start()
            try server.run()
            started = server.processIdentifier
            guard ready.wait(timeout: .now() + 60) == .success, server.isRunning,
                log.withLock({ $0.contains("ready to accept connections") })
            else {
                throw ClusterError("the server did not start: \(log.withLock { $0 })")
            }
        } catch {
            if let started { kill(started, SIGQUIT) }
            try? FileManager.default.removeItem(atPath: directory)
            throw ClusterError("cannot start PostgreSQL: \(error)")
        }
        serverPID = started ?? 0
    }

    /// At exit: stops the server with a signal (SIGQUIT, PostgreSQL's immediate shutdown), as
    /// `pg_ctl -m immediate` would; Foundation's `Process` cannot be waited on this late.
    private static func stopShared() {
        guard case .success(let cluster)? = shared.withLock({ $0 }) else { return }
        let pid = cluster.serverPID
        kill(pid, SIGQUIT)
        // The server is this process's child (setpriv execs it in place): wait for it, unless
        // Foundation has reaped it already.
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        try? FileManager.default.removeItem(atPath: cluster.directory)
    }

    /// The newest installed server's programs.
    private static func binaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "\(root)/\($0)/bin" }
    }

    /// A TCP port free on loopback at this moment.
    private static func freePort() throws(ClusterError) -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ClusterError("cannot find a free port: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func run(_ program: String, _ arguments: [String], asPostgres: Bool) throws(ClusterError) {
        let process = Process()
        if asPostgres && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", program] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: "/tmp")
        // A file, not a pipe: the server pg_ctl starts inherits the descriptors and keeps
        // them open, and a pipe would never reach its end.
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString).out")
            .path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        do {
            let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
            defer { try? output.close() }
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
        } catch {
            throw ClusterError("\(program): \(error)")
        }
        let text = FileManager.default.contents(atPath: outputPath) ?? Data()
        guard process.terminationStatus == 0 else {
            throw ClusterError(
                "\(program) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(String(decoding: text, as: UTF8.self))"
            )
        }
    }

    /// The cluster could not be made or used.
    public struct ClusterError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
