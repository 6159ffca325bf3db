extension DaemonConfiguration {
    /// One key of the daemon's configuration, written once: its name in the YAML file (dotted
    /// within a section), its environment variable, the flag that sets it, and its default
    /// and range. ``DaemonConfiguration/init(reader:)`` reads by it, `quoted --help` is
    /// written from it, and a test holds the type's doc comment and `deploy/quoted.yaml` to it.
    public struct Key: Sendable, Hashable {
        /// The name in the file: `maxBatch`, `retention.minimumAgeHours`.
        public let name: String
        /// The long flag that sets it, without its dashes; `nil` for a key without one.
        public let flag: String?
        /// The default as written in the file; `nil` when there is none.
        public let defaultText: String?
        /// A whole number's default.
        let integerDefault: Int?
        /// A whole number's allowed values.
        public let range: ClosedRange<Int>?

        /// A key whose default, if any, is `defaultText`.
        init(_ name: String, flag: String? = nil, default defaultText: String? = nil) {
            self.name = name
            self.flag = flag
            self.defaultText = defaultText
            self.integerDefault = nil
            self.range = nil
        }

        /// A whole number within `range`, `fallback` when unset.
        init(_ name: String, flag: String? = nil, default fallback: Int, range: ClosedRange<Int>) {
            self.name = name
            self.flag = flag
            self.defaultText = "\(fallback)"
            self.integerDefault = fallback
            self.range = range
        }

        /// `QUOTED_` and the name in capitals, words and sections split by `_`:
        /// `retention.minimumAgeHours` is `QUOTED_RETENTION_MINIMUM_AGE_HOURS`.
        public var environmentVariable: String {
            var variable = "QUOTED_"
            for character in name {
                if character == "." {
                    variable.append("_")
                } else if character.isUppercase {
                    variable.append("_")
                    variable.append(character)
                } else {
                    variable.append(contentsOf: character.uppercased())
                }
            }
            return variable
        }

        /// `(default X)`, or nothing without a default: for `--help`.
        public var defaultHelp: String { defaultText.map { " (default \($0))" } ?? "" }

        public static let endpoint = Key("endpoint", flag: "endpoint", default: "tcp://127.0.0.1:5555")
        public static let events = Key("events", flag: "events", default: "tcp://127.0.0.1:5556")
        public static let stateDirectory = Key("stateDirectory", flag: "state-dir", default: "var/quoted")
        public static let catalog = Key("catalog", flag: "catalog")
        public static let maxMessageBytes = Key(
            "maxMessageBytes", flag: "max-message-bytes", default: 65_536, range: 256...16_777_216)
        public static let logLevel = Key("logLevel", flag: "log-level", default: "info")
        public static let retentionHours = Key(
            "retention.minimumAgeHours", flag: "retention-hours", default: 168, range: 0...87_600)
        public static let retentionEvents = Key(
            "retention.minimumEvents", flag: "retention-events", default: 100_000, range: 0...1_000_000_000)
        public static let maxBatch = Key("maxBatch", default: 1_024, range: 1...10_000)
        public static let serverKeyFile = Key("security.serverKey", flag: "server-key")
        public static let clientsDirectory = Key("security.clientsDirectory", flag: "clients")
        public static let allowInsecure = Key("allowInsecure", default: "false")
        public static let maxConnections = Key("maxConnections", default: 4_096, range: 1...1_000_000)
        public static let highWaterMark = Key("highWaterMark", default: 10_000, range: 1...10_000_000)
        public static let maxReplyBytes = Key("maxReplyBytes", default: 65_536, range: 4_096...16_777_216)
        public static let peerQueueBytes = Key(
            "peerQueueBytes", default: 67_108_864, range: 65_536...1_073_741_824)
        public static let eventQueueBytes = Key(
            "eventQueueBytes", default: 33_554_432, range: 1_048_576...4_294_967_296)
    }

    /// Every key the daemon's own configuration reads, in the order its doc comment lists
    /// them. (The store's keys are its section's, `store.<kind>`; the metrics server's,
    /// `metrics`.)
    public static let keys: [Key] = [
        .endpoint, .events, .stateDirectory, .catalog, .maxMessageBytes, .logLevel, .retentionHours,
        .retentionEvents, .maxBatch, .serverKeyFile, .clientsDirectory, .allowInsecure, .maxConnections, .highWaterMark,
        .maxReplyBytes, .peerQueueBytes, .eventQueueBytes,
    ]
}
