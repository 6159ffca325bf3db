import ArgumentParser
import Configuration
import Foundation
import SystemPackage

/// The daemon's flags. Each maps to a configuration key (see `DaemonConfiguration`) and wins
/// over `QUOTED_*` environment variables, which win over the `--config` file.
struct DaemonOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "A YAML configuration file (see deploy/quoted.yaml).")
    var configFile: String?
    @Option(help: "The ROUTER endpoint for commands (default tcp://127.0.0.1:5555).")
    var endpoint: String?
    @Option(help: "The PUB endpoint for events (default tcp://127.0.0.1:5556).")
    var events: String?
    @Option(name: .customLong("state-dir"), help: "Where the SQLite database lives (default var/quoted).")
    var stateDirectory: String?
    @Option(help: "A YAML or JSON catalog file (default: the built-in catalog).")
    var catalog: String?
    @Option(name: .customLong("max-message-bytes"), help: "The largest request answered (default 65536).")
    var maxMessageBytes: Int?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?
    @Option(name: .customLong("retention-hours"), help: "Events younger than this are never pruned (default 168).")
    var retentionHours: Int?
    @Option(name: .customLong("retention-events"), help: "At least this many latest events are kept (default 100000).")
    var retentionEvents: Int?
    @Option(
        name: .customLong("server-key"),
        help: "The daemon's secret CURVE certificate (NAME.key_secret); with --clients, both sockets require CURVE.")
    var serverKey: String?
    @Option(
        name: .customLong("clients"), help: "The allow-list: one public certificate per client, with its role.")
    var clientsDirectory: String?
    @Option(
        name: .customLong("postgres"),
        help:
            "Store in PostgreSQL instead of SQLite: postgresql://user:password@host:5432/quoted; $QUOTED_POSTGRES_URL.")
    var postgres: String?
    @Option(
        name: .customLong("metrics"),
        help: "Serve /metrics (Prometheus), /healthz and /readyz over HTTP on HOST:PORT, e.g. 127.0.0.1:9464.")
    var metrics: String?

    /// Flags, then `QUOTED_*` environment variables, then the file.
    func reader() async throws -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        func put(_ key: String, _ value: ConfigContent?) {
            if let value {
                values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                    value, isSecret: false)
            }
        }
        put("endpoint", endpoint.map { .string($0) })
        put("events", events.map { .string($0) })
        put("stateDirectory", stateDirectory.map { .string($0) })
        put("catalog", catalog.map { .string($0) })
        put("maxMessageBytes", maxMessageBytes.map { .int($0) })
        put("logLevel", logLevel.map { .string($0) })
        put("retention.minimumAgeHours", retentionHours.map { .int($0) })
        put("retention.minimumEvents", retentionEvents.map { .int($0) })
        put("security.serverKey", serverKey.map { .string($0) })
        put("security.clientsDirectory", clientsDirectory.map { .string($0) })
        put("metrics.listen", metrics.map { .string($0) })
        // The flag, else the short environment variable; QUOTED_STORE_POSTGRES_URL and the
        // file's store.postgres.url come after.
        put(
            "store.postgres.url",
            (postgres ?? ProcessInfo.processInfo.environment["QUOTED_POSTGRES_URL"]).map { .string($0) })
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: values),
            EnvironmentVariablesProvider().prefixKeys(with: "quoted"),
        ]
        if let configFile {
            providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(configFile)))
        }
        return ConfigReader(providers: providers)
    }
}
