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
    /// its standard error.
    public static func run(_ script: String, arguments: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-c", script] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PythonError(description: String(decoding: errors, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct PythonError: Error, CustomStringConvertible {
        public let description: String
    }
}
