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

        /// What the flag's `--help` says of it, before its default; every key with a flag has it.
        public let help: String?

        /// A key whose default, if any, is `defaultText`.
        init(_ name: String, flag: String? = nil, default defaultText: String? = nil, help: String? = nil) {
            self.name = name
            self.flag = flag
            self.defaultText = defaultText
            self.integerDefault = nil
            self.range = nil
            self.help = help
        }

        /// A whole number within `range`, `fallback` when unset.
        init(_ name: String, flag: String? = nil, default fallback: Int, range: ClosedRange<Int>, help: String? = nil) {
            self.name = name
            self.flag = flag
            self.defaultText = "\(fallback)"
            self.integerDefault = fallback
            self.range = range
            self.help = help
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

        /// What `quoted --help` says of the key's flag: what it sets, then its default.
        public var flagHelp: String { "\(help ?? name)\(defaultText.map { " (default \($0))" } ?? "")." }

        public static let endpoint = Key(
            "endpoint", flag: "endpoint", default: "tcp://127.0.0.1:5555", help: "The ROUTER endpoint for commands")
        public static let events = Key(
            "events", flag: "events", default: "tcp://127.0.0.1:5556", help: "The PUB endpoint for events")
        public static let stateDirectory = Key(
            "stateDirectory", flag: "state-dir", default: "var/quoted", help: "Where the SQLite database lives")
        public static let catalog = Key(
            "catalog", flag: "catalog",
            help: "A YAML or JSON catalog file, seeding a store that has none (default: the built-in catalog)")
        public static let maxMessageBytes = Key(
            "maxMessageBytes", flag: "max-message-bytes", default: 65_536, range: 256...16_777_216,
            help: "The largest request answered")
        public static let logLevel = Key(
            "logLevel", flag: "log-level", default: "info",
            help: "trace, debug, info, notice, warning, error or critical")
        public static let retentionHours = Key(
            "retention.minimumAgeHours", flag: "retention-hours", default: 168, range: 0...87_600,
            help: "Events younger than this are never pruned")
        public static let retentionEvents = Key(
            "retention.minimumEvents", flag: "retention-events", default: 100_000, range: 0...1_000_000_000,
            help: "At least this many latest events are kept")
        public static let maxBatch = Key("maxBatch", default: 1_024, range: 1...10_000)
        public static let serverKeyFile = Key(
            "security.serverKey", flag: "server-key",
            help: "The daemon's secret CURVE certificate (NAME.key_secret); with --clients, both sockets require CURVE")
        public static let clientsDirectory = Key(
            "security.clientsDirectory", flag: "clients",
            help: "The allow-list: one public certificate per client, with its role")
        public static let allowInsecure = Key("allowInsecure", default: "false")
        public static let maxConnections = Key("maxConnections", default: 4_096, range: 1...1_000_000)
        public static let maxConnectionsPerAddress = Key(
            "maxConnectionsPerAddress", default: 256, range: 1...1_000_000)
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
        .retentionEvents, .maxBatch, .serverKeyFile, .clientsDirectory, .allowInsecure, .maxConnections,
        .maxConnectionsPerAddress, .highWaterMark,
        .maxReplyBytes, .peerQueueBytes, .eventQueueBytes,
    ]
}
