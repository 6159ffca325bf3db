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
        let result = try process.runToEnd()
        guard result.exited, result.status == 0 else {
            throw PythonError(
                description: result.exited ? result.stderr : "ran for two minutes; killed. \(result.stderr)")
        }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct PythonError: Error, CustomStringConvertible {
        public let description: String
    }
}
