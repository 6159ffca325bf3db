public import Foundation

/// What a child run to its end left.
public struct ChildResult: Sendable {
    /// Whether it exited within its time; one that did not was killed.
    public let exited: Bool
    /// Its exit status; -1 when it did not exit.
    public let status: Int32
    public let stdout: String
    public let stderr: String
}

extension Process {
    /// Runs the process to its end, for at most `limit` (then it is killed): its standard
    /// output and error go to files, so that neither can fill up and block it; `stdin` is
    /// written to its standard input, then closed (without it, it reads nothing).
    public func runToEnd(stdin: String? = nil, within limit: Duration = .seconds(120)) throws -> ChildResult {
        let name = executableURL?.lastPathComponent ?? "child"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let err = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        standardOutput = try FileHandle(forWritingTo: out)
        standardError = try FileHandle(forWritingTo: err)
        if let stdin {
            let pipe = Pipe.forChild()
            standardInput = pipe
            try spawn()
            pipe.fileHandleForWriting.write(Data(stdin.utf8))
            try pipe.fileHandleForWriting.close()
        } else {
            standardInput = FileHandle.nullDevice
            try spawn()
        }
        let exited = waitUntilExit(within: limit)
        return ChildResult(
            exited: exited, status: isRunning ? -1 : terminationStatus,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }
}
