import ArgumentParser
import Configuration
import Foundation
import QuoteDaemon
import SystemPackage

/// The daemon's flags. Each maps to a configuration key (see `DaemonConfiguration`) and wins
/// over `QUOTED_*` environment variables, which win over the `--config` file.
struct DaemonOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: "A YAML configuration file (see deploy/quoted.yaml).")
    var configFile: String?
    @Option(name: Key.endpoint.long, help: "The ROUTER endpoint for commands\(Key.endpoint.defaultHelp).")
    var endpoint: String?
    @Option(name: Key.events.long, help: "The PUB endpoint for events\(Key.events.defaultHelp).")
    var events: String?
    @Option(name: Key.stateDirectory.long, help: "Where the SQLite database lives\(Key.stateDirectory.defaultHelp).")
    var stateDirectory: String?
    @Option(
        name: Key.catalog.long,
        help: "A YAML or JSON catalog file, seeding a store that has none (default: the built-in catalog).")
    var catalog: String?
    @Option(
        name: Key.maxMessageBytes.long, help: "The largest request answered\(Key.maxMessageBytes.defaultHelp).")
    var maxMessageBytes: Int?
    @Option(
        name: Key.logLevel.long,
        help: "trace, debug, info, notice, warning, error or critical\(Key.logLevel.defaultHelp).")
    var logLevel: String?
    @Option(
        name: Key.retentionHours.long,
        help: "Events younger than this are never pruned\(Key.retentionHours.defaultHelp).")
    var retentionHours: Int?
    @Option(
        name: Key.retentionEvents.long,
        help: "At least this many latest events are kept\(Key.retentionEvents.defaultHelp).")
    var retentionEvents: Int?
    @Option(
        name: Key.serverKeyFile.long,
        help: "The daemon's secret CURVE certificate (NAME.key_secret); with --clients, both sockets require CURVE.")
    var serverKey: String?
    @Option(
        name: Key.clientsDirectory.long, help: "The allow-list: one public certificate per client, with its role.")
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
        put(Key.endpoint.name, endpoint.map { .string($0) })
        put(Key.events.name, events.map { .string($0) })
        put(Key.stateDirectory.name, stateDirectory.map { .string($0) })
        put(Key.catalog.name, catalog.map { .string($0) })
        put(Key.maxMessageBytes.name, maxMessageBytes.map { .int($0) })
        put(Key.logLevel.name, logLevel.map { .string($0) })
        put(Key.retentionHours.name, retentionHours.map { .int($0) })
        put(Key.retentionEvents.name, retentionEvents.map { .int($0) })
        put(Key.serverKeyFile.name, serverKey.map { .string($0) })
        put(Key.clientsDirectory.name, clientsDirectory.map { .string($0) })
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

/// The configuration's key table, as the flags name it.
private typealias Key = DaemonConfiguration.Key

extension DaemonConfiguration.Key {
    /// The key's flag as ArgumentParser names it; a key without one has none to give, and is
    /// never asked.
    fileprivate var long: NameSpecification { flag.map { .customLong($0) } ?? .long }
}
