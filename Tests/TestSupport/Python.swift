import Foundation

/// The project's Python, with its test tools (`scripts/setup` makes it).
public enum Python {
    public static var executable: String {
        if let override = ProcessInfo.processInfo.environment["QUOTED_PYTHON"] { return override }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.path + "/.build/venv/bin/python3"
    }

    /// Runs `script` with `arguments`; returns its standard output, trimmed, or throws with
    /// its standard error. Both go to files, so that neither can fill up and block the script;
    /// one that runs for two minutes is killed and fails.
    public static func run(_ script: String, arguments: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", script] + arguments
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("python-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let err = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.spawn()
        let exited = process.waitUntilExit(within: .seconds(120))
        let errors = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        guard exited, process.terminationStatus == 0 else {
            throw PythonError(description: exited ? errors : "ran for two minutes; killed. \(errors)")
        }
        return try String(contentsOf: out, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct PythonError: Error, CustomStringConvertible {
        public let description: String
    }
}
