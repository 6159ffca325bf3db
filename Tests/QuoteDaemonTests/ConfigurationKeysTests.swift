import Foundation
import Testing

@testable import QuoteDaemon

/// The key table (`DaemonConfiguration.keys`) is where a key is written once; the doc comment
/// and the deployed file are prose beside it, held to it here.
@Suite("The configuration's keys")
struct ConfigurationKeysTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `text` without thousands separators and code voice, so that `65,536` reads as `65536`.
    private static func plain(_ text: some StringProtocol) -> String {
        text.replacingOccurrences(of: ",", with: "").replacingOccurrences(of: "`", with: "")
    }

    @Test("the doc comment lists exactly the table's keys, each with its variable, its flag and its default")
    func docComment() throws {
        let source = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/QuoteDaemon/DaemonConfiguration.swift"),
            encoding: .utf8)
        // `/// - `name` / `VARIABLE` / `--flag`: what it is…; default X.`, continued on lines
        // that do not start a new item.
        var items: [(name: String, variable: String, flag: String?, text: String)] = []
        let item = /^\/\/\/ - `([^`]+)` \/ `([^`]+)`(?: \/ `--([^`]+)`)?:(.*)$/
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: item) {
                items.append((String(match.1), String(match.2), match.3.map(String.init), String(match.4)))
            } else if line.hasPrefix("///   "), !items.isEmpty {
                items[items.count - 1].text += " " + line.dropFirst(6)
            }
        }
        #expect(items.map(\.name) == DaemonConfiguration.keys.map(\.name), "the same keys, in the table's order")
        for key in DaemonConfiguration.keys {
            let documented = try #require(items.first { $0.name == key.name })
            #expect(documented.variable == key.environmentVariable, "\(key.name)")
            #expect(documented.flag == key.flag, "\(key.name)")
            if let defaultText = key.defaultText {
                #expect(
                    Self.plain(documented.text).contains("default \(defaultText)"), "\(key.name): \(documented.text)")
            }
            if let range = key.range {
                #expect(
                    Self.plain(documented.text).contains("\(range.lowerBound) to \(range.upperBound)"),
                    "\(key.name): \(documented.text)")
            }
        }
    }

    @Test("deploy/quoted.yaml names every key of the table, with its flag, and no key the table lacks")
    func deployedFile() throws {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("deploy/quoted.yaml"), encoding: .utf8)
        let lines = text.split(separator: "\n").map(String.init)
        // A key set or shown commented out: `name: value` at the top level, `  leaf: value`
        // under its section.
        func mentions(_ key: DaemonConfiguration.Key) -> String? {
            let parts = key.name.split(separator: ".")
            let leaf = String(parts.last ?? "")
            let indent = parts.count > 1 ? "  " : ""
            return lines.first { line in
                var body = Substring(line)
                if body.hasPrefix("# ") { body = body.dropFirst(2) }
                return body.hasPrefix(indent + leaf + ":")
                    && (indent.isEmpty || !body.dropFirst(indent.count).hasPrefix(" "))
            }
        }
        for key in DaemonConfiguration.keys {
            #expect(mentions(key) != nil, "deploy/quoted.yaml does not show \(key.name)")
        }
        // Every flag the file names is a key's, or one of the flags that are not keys.
        let others: Set = ["config", "postgres", "metrics", "dir"]
        let flags = Set(DaemonConfiguration.keys.compactMap(\.flag))
        for match in text.matches(of: /--([a-z][a-z-]*)/) {
            let flag = String(match.1)
            #expect(flags.contains(flag) || others.contains(flag), "deploy/quoted.yaml names --\(flag)")
        }
        // Every top-level key set is in the table, or a section of its own component.
        let sections: Set = ["store", "metrics", "security", "retention"]
        for line in lines where !line.hasPrefix("#") && !line.hasPrefix(" ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            #expect(
                DaemonConfiguration.keys.contains { $0.name == name } || sections.contains(name),
                "deploy/quoted.yaml sets \(name), which quoted does not read")
        }
    }

    @Test("each key's environment variable is QUOTED_ and its name in capitals")
    func environmentVariables() {
        #expect(DaemonConfiguration.Key.maxMessageBytes.environmentVariable == "QUOTED_MAX_MESSAGE_BYTES")
        #expect(
            DaemonConfiguration.Key.retentionHours.environmentVariable == "QUOTED_RETENTION_MINIMUM_AGE_HOURS")
        #expect(DaemonConfiguration.Key.serverKeyFile.environmentVariable == "QUOTED_SECURITY_SERVER_KEY")
        #expect(Set(DaemonConfiguration.keys.map(\.name)).count == DaemonConfiguration.keys.count)
    }
}
