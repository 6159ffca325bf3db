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

let package = Package(
    name: "quoted",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "quoted", targets: ["quoted"]),
        .executable(name: "quotectl", targets: ["quotectl"]),
        .executable(name: "quoted-bench", targets: ["quoted-bench"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
        .library(name: "QuoteCore", targets: ["QuoteCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // MARK: ZeroMQ
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: ["CZeroMQ"],
            swiftSettings: swiftSettings
        ),

        // MARK: Domain
        .target(
            name: "QuoteCore",
            swiftSettings: swiftSettings
        ),

        // MARK: Storage
        .target(
            name: "QuoteStore",
            dependencies: ["QuoteCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "QuoteStoreSQLite",
            dependencies: [
                "QuoteCore",
                "QuoteStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Executables
        .executableTarget(
            name: "quoted",
            dependencies: [
                .product(name: "Logging", package: "swift-log")
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quotectl",
            dependencies: [
                "ZeroMQ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "quoted-bench",
            dependencies: [
                "ZeroMQ",
                "CZeroMQ",
                "QuoteCore",
                "QuoteStore",
                "QuoteStoreSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "ZeroMQTests",
            dependencies: ["ZeroMQ"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "QuoteStoreTests",
            dependencies: [
                "QuoteCore",
                "QuoteStore",
                "QuoteStoreSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
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
