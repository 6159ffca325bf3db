// swift-tools-version: 6.2
import PackageDescription

/// Settings every target of ours shares: Swift 6 mode and the upcoming features the
/// project follows (explicit existentials, member import visibility, internal imports).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// For the modules a write transaction runs through (the store's protocols, the rules, the
/// stores): an async function without isolation runs where its caller runs, so the rules'
/// calls into a transaction stay on the store's writer without an executor switch each.
let runsWhereCalled: [SwiftSetting] = swiftSettings + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

let package = Package(
    name: "quoted",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "quoted", targets: ["quoted"]),
        .executable(name: "quoted-bench", targets: ["quoted-bench"]),
        .executable(name: "quotectl", targets: ["quotectl"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "QuoteCore", targets: ["QuoteCore"]),
        .library(name: "QuoteClient", targets: ["QuoteClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(
            url: "https://github.com/apple/swift-configuration", from: "1.4.0",
            traits: [.defaults, "YAML", "Logging"]),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // `swift package generate-documentation`: DocC for the library products, in scripts/test.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: ZeroMQ
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The executables' allocator on Linux (Debian's mimalloc), in place of glibc's for the
        // whole process: a request makes some forty small allocations, most freed a batch later
        // or on another thread, where glibc's per-thread cache overflows into its arenas.
        .systemLibrary(
            name: "CMimalloc",
            providers: [.apt(["libmimalloc-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            swiftSettings: swiftSettings
        ),
        // The threads quoted owns and how work reaches them.
        .target(
            name: "Threads",
            swiftSettings: swiftSettings
        ),
        // A growable byte buffer for writers: the JSON writer's and the stored codecs'.
        .target(
            name: "Bytes",
            swiftSettings: swiftSettings
        ),

        // MARK: Domain
        .target(
            name: "QuoteCore",
            swiftSettings: swiftSettings
        ),

        // MARK: Wire protocol
        .target(
            name: "QuoteWire",
            dependencies: ["Bytes", "QuoteCore", "QuoteStore", "QuoteRules"],
            swiftSettings: swiftSettings
        ),

        // MARK: Storage
        .target(
            name: "QuoteStore",
            dependencies: ["QuoteCore"],
            swiftSettings: runsWhereCalled
        ),

        // MARK: Rules
        .target(
            name: "QuoteRules",
            dependencies: ["QuoteCore", "QuoteStore"],
            swiftSettings: runsWhereCalled
        ),
        // The stored form of quotes and histories, shared by the stores.
        .target(
            name: "QuoteStoreCodec",
            dependencies: ["Bytes", "QuoteCore", "QuoteStore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "QuoteStorePostgres",
            dependencies: [
                "QuoteCore",
                "QuoteStore",
                "QuoteStoreCodec",
                "Threads",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: runsWhereCalled
        ),
        .target(
            name: "QuoteStoreSQLite",
            dependencies: [
                "CSQLite",
                "QuoteCore",
                "QuoteStore",
                "QuoteStoreCodec",
                "Threads",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: runsWhereCalled
        ),

        // MARK: Daemon
        .target(
            name: "QuoteDaemon",
            dependencies: [
                "ZeroMQ",
                "QuoteCore",
                "QuoteWire",
                "QuoteStore",
                "QuoteRules",
                "Threads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: The catalog file (YAML or JSON), read by the daemon and by quotectl
        .target(
            name: "CatalogFile",
            dependencies: [
                "QuoteCore",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Metrics over HTTP (Prometheus, health and readiness)
        .target(
            name: "QuoteMetricsServer",
            dependencies: [
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Client
        .target(
            name: "QuoteClient",
            dependencies: ["ZeroMQ", "QuoteCore", "QuoteWire", "Threads"],
            swiftSettings: swiftSettings
        ),

        // MARK: Commands both executables share
        .target(
            name: "KeyCommands",
            dependencies: [
                "QuoteWire",
                "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Executables
        .executableTarget(
            name: "quoted",
            dependencies: [
                .target(name: "CMimalloc", condition: .when(platforms: [.linux])),
                "CatalogFile",
                "KeyCommands",
                "QuoteDaemon",
                "QuoteCore",
                "QuoteMetricsServer",
                "QuoteRules",
                "QuoteStore",
                "QuoteStorePostgres",
                "QuoteStoreSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quotectl",
            dependencies: [
                "CatalogFile",
                "KeyCommands",
                "QuoteClient",
                "QuoteCore",
                "QuoteWire",
                "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quoted-bench",
            dependencies: [
                .target(name: "CMimalloc", condition: .when(platforms: [.linux])),
                "Bytes",
                "ZeroMQ",
                "CZeroMQ",
                "QuoteClient",
                "QuoteCore",
                "QuoteDaemon",
                "QuoteRules",
                "QuoteStore",
                "QuoteStoreSQLite",
                "QuoteWire",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        // What several test targets share: running the project's Python (pyzmq).
        .target(
            name: "TestSupport",
            dependencies: ["QuoteCore", "QuoteRules", "QuoteStore"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ThreadsTests",
            dependencies: ["Threads"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ZeroMQTests",
            dependencies: ["ZeroMQ", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteStoreTests",
            dependencies: [
                "QuoteCore",
                "QuoteRules",
                "QuoteStore",
                "QuoteStoreCodec",
                "TestSupport",
                "QuoteStoreSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteStoreContractTests",
            dependencies: [
                "QuoteCore",
                "QuoteRules",
                "QuoteStore",
                "QuoteStoreSQLite",
                "QuoteStorePostgres",
                "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteClientTests",
            dependencies: ["QuoteClient", "QuoteCore", "QuoteWire", "ZeroMQ"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteWireTests",
            dependencies: ["Bytes", "QuoteCore", "QuoteRules", "QuoteStore", "QuoteWire"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteDaemonTests",
            dependencies: [
                "CatalogFile",
                "QuoteCore",
                "QuoteDaemon",
                "QuoteMetricsServer",
                "QuoteRules",
                "QuoteStore",
                "QuoteStorePostgres",
                "QuoteStoreSQLite",
                "QuoteWire",
                "ZeroMQ",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuotedEndToEndTests",
            dependencies: ["ZeroMQ", "TestSupport", "QuoteClient", "QuoteCore", "QuoteDaemon", "QuoteWire"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteCoreTests",
            dependencies: [
                "QuoteCore",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
