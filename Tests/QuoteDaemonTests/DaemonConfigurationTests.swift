import CatalogFile
import Configuration
import Foundation
import Logging
import QuoteCore
import QuoteDaemon
import QuoteMetricsServer
import QuoteStore
import QuoteStoreSQLite
import SystemPackage
import Testing
import ZeroMQ

@testable import QuoteStorePostgres

@Suite("Daemon configuration and catalog files")
struct DaemonConfigurationTests {
    static func reader(_ values: [AbsoluteConfigKey: ConfigValue]) -> ConfigReader {
        ConfigReader(provider: InMemoryProvider(values: values))
    }

    @Test("with nothing set, the defaults are the documented ones")
    func defaults() throws {
        let configuration = try DaemonConfiguration(reader: Self.reader([:]))
        #expect(configuration.endpoint == "tcp://127.0.0.1:5555")
        #expect(configuration.events == "tcp://127.0.0.1:5556")
        #expect(configuration.stateDirectory == "var/quoted")
        #expect(configuration.maxMessageBytes == 65_536)
        #expect(configuration.logLevel == "info")
        #expect(configuration.retentionHours == 168)
        #expect(configuration.retentionEvents == 100_000)
        #expect(configuration.maxBatch == 1_024)
        #expect(configuration.databasePath == "var/quoted/quoted.sqlite")
        let store = try SQLiteQuoteStore.Configuration(reader: Self.reader([:]).scoped(to: "store.sqlite"))
        #expect(store.synchronousFull)
        #expect(store.backgroundCheckpointPages == 128)
        #expect(store.busyTimeout == .seconds(5))
    }

    @Test(
        "metrics.listen takes HOST:PORT and names what is wrong with anything else",
        arguments: [
            ("127.0.0.1:9464", "127.0.0.1", 9464), ("[::1]:0", "::1", 0), ("0.0.0.0:80", "0.0.0.0", 80),
        ])
    func metricsListen(listen: String, host: String, port: Int) throws {
        #expect(try MetricsServer.Configuration(listen: listen) == MetricsServer.Configuration(host: host, port: port))
    }

    @Test(
        "metrics.listen counts as loopback only for localhost, ::1 and 127.x.y.z written in numbers; beyond it only with allowRemote",
        arguments: [
            ("127.0.0.1", true), ("127.8.9.10", true), ("localhost", true), ("::1", true), ("0.0.0.0", false),
            ("10.0.0.1", false), ("::", false), ("127.a.b.c", false), ("127.0.0.1.example.com", false),
            ("127.0.0.256", false), ("example.com", false),
        ])
    func metricsLoopback(host: String, loopback: Bool) throws {
        let configuration = MetricsServer.Configuration(host: host, port: 9464)
        #expect(configuration.isLoopback == loopback)
        if loopback {
            try configuration.checkReach()
        } else {
            #expect(throws: MetricsConfigurationError.self) { try configuration.checkReach() }
        }
        try MetricsServer.Configuration(host: host, port: 9464, allowRemote: true).checkReach()
    }

    @Test(
        "a metrics.listen without a host or a valid port is refused",
        arguments: ["9464", ":9464", "host:http", "h:70000"])
    func invalidMetricsListen(listen: String) {
        #expect(throws: MetricsConfigurationError.self) { try MetricsServer.Configuration(listen: listen) }
    }

    @Test(
        "an invalid store setting is refused with its full key and the reason",
        arguments: [
            ("store.sqlite.synchronous", ConfigValue(.string("sometimes"), isSecret: false), "is not full or normal"),
            ("store.sqlite.checkpointPages", ConfigValue(.int(-1), isSecret: false), "outside 0...1000000"),
            (
                "store.sqlite.busyTimeoutMilliseconds", ConfigValue(.string("long"), isSecret: false),
                "not a whole number"
            ),
            (
                "store.sqlite.quoteCacheBytes", ConfigValue(.int(2_000_000_000), isSecret: false),
                "outside 0...1073741824"
            ),
        ])
    func invalidStoreValues(key: String, value: ConfigValue, reason: String) {
        let path = AbsoluteConfigKey(key.split(separator: ".").map(String.init))
        let error = #expect(throws: StoreError.self) {
            try SQLiteQuoteStore.Configuration(reader: Self.reader([path: value]).scoped(to: "store.sqlite"))
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.hasPrefix(key) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test(
        "an invalid PostgreSQL setting is refused with its full key and the reason, as SQLite's are",
        arguments: [
            ("store.postgres.poolSize", ConfigValue(.string("many"), isSecret: false), "not a whole number"),
            ("store.postgres.poolSize", ConfigValue(.int(1), isSecret: false), "outside 2...100"),
            (
                "store.postgres.connectTimeoutMilliseconds", ConfigValue(.string("99"), isSecret: false),
                "outside 100...60000"
            ),
        ])
    func invalidPostgresValues(key: String, value: ConfigValue, reason: String) {
        let url = ConfigValue(.string("postgresql://quoted@127.0.0.1:5432/quoted"), isSecret: false)
        let values = [
            AbsoluteConfigKey(["store", "postgres", "url"]): url,
            AbsoluteConfigKey(key.split(separator: ".").map(String.init)): value,
        ]
        let error = #expect(throws: StoreError.self) {
            try PostgresQuoteStore.Configuration(reader: Self.reader(values).scoped(to: "store.postgres"))
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.hasPrefix(key) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("a PostgreSQL URL may name several hosts, as libpq writes them; its password never reaches a log")
    func postgresHosts() throws {
        let configuration = try PostgresQuoteStore.Configuration(
            url: "postgresql://quoted:s3cret@db1:5433,[::1]:5434,db3/orders?target_session_attrs=read-write")
        #expect(configuration.hosts.map(\.description) == ["db1:5433", "[::1]:5434", "db3:5432"])
        #expect(
            configuration.redactedURL
                == "postgresql://quoted:***@db1:5433,[::1]:5434,db3/orders?target_session_attrs=read-write")
        #expect(
            try PostgresQuoteStore.Configuration(url: "postgres://quoted@db/x").hosts.map(\.description) == ["db:5432"])
    }

    @Test(
        "a PostgreSQL URL that would let quoted write to a standby, or names a host badly, is refused",
        arguments: [
            ("postgresql://quoted@db1,db2/x?target_session_attrs=read-only", "target_session_attrs"),
            ("postgresql://quoted@db1,db2/x?target_session_attrs=standby", "target_session_attrs"),
            ("postgresql://quoted@db1:5432,db2:http/x", "no valid port"),
            ("postgresql://quoted@db1,,db2/x", "empty host"),
            ("postgresql://quoted@db1:70000/x", "outside 1...65535"),
        ])
    func invalidPostgresURL(url: String, reason: String) {
        let error = #expect(throws: StoreError.self) { try PostgresQuoteStore.Configuration(url: url) }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("a PostgreSQL number written as text with separators is read as the number")
    func postgresNumberAsText() throws {
        let values = [
            AbsoluteConfigKey(["store", "postgres", "url"]): ConfigValue(
                .string("postgresql://quoted@127.0.0.1:5432/quoted"), isSecret: false),
            AbsoluteConfigKey(["store", "postgres", "acquireTimeoutMilliseconds"]): ConfigValue(
                .string("20_000"), isSecret: false),
        ]
        let configuration = try PostgresQuoteStore.Configuration(
            reader: Self.reader(values).scoped(to: "store.postgres"))
        #expect(configuration.acquireTimeout == .seconds(20))
    }

    @Test(
        "a store setting at its old top-level key is refused, naming where it went",
        arguments: DaemonConfiguration.moved)
    func movedKeys(old: String, new: String) {
        let error = #expect(throws: ConfigurationError.self) {
            try DaemonConfiguration(
                reader: Self.reader([AbsoluteConfigKey([old]): ConfigValue(.string("full"), isSecret: false)]))
        }
        #expect(error?.key == old)
        #expect(error?.reason == "moved to \(new)")
    }

    @Test(
        "only binds reachable from this host alone are allowed without security",
        arguments: [
            ("tcp://127.0.0.1:5555", true), ("tcp://127.0.0.2:*", true), ("tcp://localhost:*", true),
            ("tcp://[::1]:5555", true), ("tcp://lo:5555", true), ("ipc:///run/quoted.sock", true),
            ("inproc://quoted", true), ("tcp://0.0.0.0:5555", false), ("tcp://*:5555", false),
            ("tcp://eth0:5555", false), ("tcp://192.168.1.2:5555", false), ("tcp://127.example.com:1", false),
        ])
    func localBinds(endpoint: String, local: Bool) throws {
        #expect(DaemonConfiguration.isLocal(endpoint) == local)
        let settings: [AbsoluteConfigKey: ConfigValue] = ["events": .init(.string(endpoint), isSecret: false)]
        if local {
            #expect(try DaemonConfiguration(reader: Self.reader(settings)).events == endpoint)
        } else {
            let error = #expect(throws: ConfigurationError.self) {
                try DaemonConfiguration(reader: Self.reader(settings))
            }
            #expect(error?.key == "events")
            #expect(error?.reason.contains("allowInsecure") == true)
            var insecure = settings
            insecure["allowInsecure"] = .init(.bool(true), isSecret: false)
            #expect(try DaemonConfiguration(reader: Self.reader(insecure)).allowInsecure)
        }
    }

    @Test(
        "security needs both its keys, each named when the other is missing; with them a wide bind is allowed",
        arguments: [
            ("security.serverKey", "security.clientsDirectory"), ("security.clientsDirectory", "security.serverKey"),
        ])
    func securityKeysGoTogether(_ given: String, _ missing: String) throws {
        let key = AbsoluteConfigKey(given.split(separator: ".").map(String.init))
        let error = #expect(throws: ConfigurationError.self) {
            try DaemonConfiguration(reader: Self.reader([key: .init(.string("/etc/quoted/x"), isSecret: false)]))
        }
        #expect(error?.key == missing)
        let secure = try DaemonConfiguration(
            reader: Self.reader([
                "security.serverKey": .init(.string("/etc/quoted/quoted.key_secret"), isSecret: false),
                "security.clientsDirectory": .init(.string("/etc/quoted/clients"), isSecret: false),
                "endpoint": .init(.string("tcp://0.0.0.0:5555"), isSecret: false),
            ]))
        #expect(secure.isSecure)
        #expect(secure.endpoint == "tcp://0.0.0.0:5555")
    }

    @Test(
        "a client certificate without a known role, or unreadable, stops start-up naming the file",
        arguments: [
            ("metadata\n    name = \"a\"\n", "names no role"),
            ("metadata\n    role = \"admin\"\n", "unknown role \"admin\""),
            ("not a certificate\n", "no curve public-key"),
        ])
    func badClientCertificates(_ metadata: String, _ reason: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("acl-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try Certificate.generate()
        _ = try server.save(named: "quoted", in: directory)
        try FileManager.default.createDirectory(atPath: directory + "/clients", withIntermediateDirectories: true)
        let client = try Certificate.generate()
        let curve = metadata.hasPrefix("not") ? "" : "curve\n    public-key = \"\(try Z85.encode(client.publicKey))\"\n"
        try Data((metadata + curve).utf8).write(to: URL(fileURLWithPath: directory + "/clients/a.key"))
        let error = #expect(throws: ConfigurationError.self) {
            try AccessControl(
                serverKeyFile: directory + "/quoted.key_secret", clientsDirectory: directory + "/clients",
                logger: Logger(label: "test"))
        }
        #expect(error?.key == "security.clientsDirectory")
        #expect(error?.reason.contains("a.key") == true, "\(String(describing: error))")
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
        // The public certificate is not a server key.
        let notSecret = #expect(throws: ConfigurationError.self) {
            try AccessControl(
                serverKeyFile: directory + "/quoted.key", clientsDirectory: directory, logger: Logger(label: "test"))
        }
        #expect(notSecret?.key == "security.serverKey")
    }

    @Test("deploy/quoted.yaml reads without error, its store settings under store.sqlite")
    func deployedFile() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let reader = ConfigReader(
            provider: try await FileProvider<YAMLSnapshot>(
                filePath: FilePath(root.appendingPathComponent("deploy/quoted.yaml").path)))
        let configuration = try DaemonConfiguration(reader: reader)
        #expect(configuration.stateDirectory == "/var/lib/quoted")
        let store = try SQLiteQuoteStore.Configuration(reader: reader.scoped(to: "store.sqlite"))
        #expect(store.synchronousFull)
        #expect(store.backgroundCheckpointPages == 128)
        #expect(store.busyTimeout == .seconds(5))
        let metrics = try #require(try MetricsServer.Configuration(reader: reader.scoped(to: "metrics")))
        #expect(metrics == MetricsServer.Configuration(host: "127.0.0.1", port: 9464))
    }

    @Test(
        "an invalid value is refused with its key and the reason",
        arguments: [
            ("maxMessageBytes", ConfigValue(.string("lots"), isSecret: false), "is not a whole number"),
            ("maxMessageBytes", ConfigValue(.int(10), isSecret: false), "outside 256...16777216"),
            ("endpoint", ConfigValue(.string("localhost:5555"), isSecret: false), "is not a ZeroMQ endpoint"),
            ("logLevel", ConfigValue(.string("loud"), isSecret: false), "is not one of"),
            ("maxBatch", ConfigValue(.int(0), isSecret: false), "outside 1...10000"),
        ])
    func invalidValues(key: String, value: ConfigValue, reason: String) {
        let path = AbsoluteConfigKey(key.split(separator: ".").map(String.init))
        let error = #expect(throws: ConfigurationError.self) {
            try DaemonConfiguration(reader: Self.reader([path: value]))
        }
        #expect(error?.key == key)
        #expect(error?.reason.contains(reason) == true, "\(error?.reason ?? "")")
    }

    @Test("the example catalog file in deploy/ is the built-in catalog")
    func exampleCatalog() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let catalog = try CatalogLoader.load(root.path + "/deploy/catalog.yaml")
        #expect(catalog.services == Catalog.standard.services)
        #expect(catalog.mechanics == Catalog.standard.mechanics)
        #expect(catalog.coupons == Catalog.standard.coupons)
    }

    @Test("a bad catalog file is refused with every problem and the file named")
    func badCatalog() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID().uuidString).yaml")
            .path
        try """
        services:
          - { name: Oil Change, minimumSkill: wizard, price: "35.00" }
          - { name: Oil Change, minimumSkill: junior, price: "-1.00" }
        mechanics:
          - { id: 1, name: Ann, skill: junior }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: CatalogLoadError.self) { try CatalogLoader.load(path) }
        #expect(error?.path == path)
        #expect(error?.problems.map(\.field) == ["services[0].minimumSkill", "services[1].price"])
        #expect(throws: CatalogLoadError.self) { try CatalogLoader.load(path + ".missing") }
    }
}
