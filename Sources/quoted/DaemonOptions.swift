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
    @Option(name: Key.endpoint.long, help: Key.endpoint.argumentHelp) var endpoint: String?
    @Option(name: Key.events.long, help: Key.events.argumentHelp) var events: String?
    @Option(name: Key.stateDirectory.long, help: Key.stateDirectory.argumentHelp) var stateDirectory: String?
    @Option(name: Key.catalog.long, help: Key.catalog.argumentHelp) var catalog: String?
    @Option(name: Key.maxMessageBytes.long, help: Key.maxMessageBytes.argumentHelp) var maxMessageBytes: Int?
    @Option(name: Key.logLevel.long, help: Key.logLevel.argumentHelp) var logLevel: String?
    @Option(name: Key.retentionHours.long, help: Key.retentionHours.argumentHelp) var retentionHours: Int?
    @Option(name: Key.retentionEvents.long, help: Key.retentionEvents.argumentHelp) var retentionEvents: Int?
    @Option(name: Key.serverKeyFile.long, help: Key.serverKeyFile.argumentHelp) var serverKey: String?
    @Option(name: Key.clientsDirectory.long, help: Key.clientsDirectory.argumentHelp) var clientsDirectory: String?
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
        let flags: [(Key, ConfigContent?)] = [
            (.endpoint, endpoint.map { .string($0) }), (.events, events.map { .string($0) }),
            (.stateDirectory, stateDirectory.map { .string($0) }), (.catalog, catalog.map { .string($0) }),
            (.maxMessageBytes, maxMessageBytes.map { .int($0) }), (.logLevel, logLevel.map { .string($0) }),
            (.retentionHours, retentionHours.map { .int($0) }), (.retentionEvents, retentionEvents.map { .int($0) }),
            (.serverKeyFile, serverKey.map { .string($0) }), (.clientsDirectory, clientsDirectory.map { .string($0) }),
        ]
        for (key, value) in flags { put(key.name, value) }
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
    /// The key's `--help` text, from the table.
    fileprivate var argumentHelp: ArgumentHelp { ArgumentHelp(flagHelp) }
}
