import ArgumentParser
import Configuration
import Foundation
import Logging
import QuoteCore
import QuoteDaemon
import QuoteStore
import QuoteStoreSQLite
import ServiceLifecycle
import UnixSignals

/// Runs the daemon in the foreground until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve quotes (the default).")

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let (level, logger) = Startup.bootstrapLogging()
        let daemon = try await Startup.prepare(options: options, level: level, logger: logger)

        let server = CommandServer(
            configuration: daemon.configuration, store: daemon.store, logger: logger, notifier: daemon.notifier)
        let reload = ReloadService(logger: logger) {
            await Startup.reload(
                options: options, current: daemon.configuration, store: daemon.store, level: level, logger: logger)
        }
        var services: [any ServiceLifecycle.Service] = [server, reload]
        if let trigger = daemon.store.checkpointTrigger {
            services.append(
                CheckpointService(path: daemon.configuration.databasePath, trigger: trigger, logger: logger))
        }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        logger.notice("quoted stopped")
    }
}

/// Fixes what the integrity check reports, logging each repair as events.
struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Repair booking invariant violations found at start-up (stop the daemon first).")

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let (level, logger) = Startup.bootstrapLogging()
        let daemon = try await Startup.prepare(options: options, level: level, logger: logger)
        let repaired = try daemon.store.repairIntegrity()
        logger.notice("repair finished", metadata: ["repaired": "\(repaired.count)"])
    }
}

/// What start-up produces: the validated configuration and the open store.
struct Startup {
    let configuration: DaemonConfiguration
    let store: SQLiteQuoteStore
    let notifier: SystemdNotifier

    /// Sends every log line to stderr in journald's format, at a level SIGHUP can change.
    static func bootstrapLogging() -> (SharedLogLevel, Logger) {
        let level = SharedLogLevel(.info)
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level) }
        return (level, Logger(label: "quoted"))
    }

    /// Reads the configuration, loads the catalog and opens the store, failing fast (exit 78,
    /// EX_CONFIG) with the exact key or file and reason.
    static func prepare(options: DaemonOptions, level: SharedLogLevel, logger: Logger) async throws -> Startup {
        let configuration: DaemonConfiguration
        let catalog: Catalog
        do {
            configuration = try DaemonConfiguration(reader: try await options.reader())
            level.value = Logger.Level(rawValue: configuration.logLevel) ?? .info
            catalog = try CatalogLoader.load(configuration.catalogFile)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(78)
        }
        do {
            try FileManager.default.createDirectory(
                atPath: configuration.stateDirectory, withIntermediateDirectories: true)
        } catch {
            logger.critical("cannot create the state directory \(configuration.stateDirectory): \(error)")
            throw ExitCode(73)
        }
        var storeConfiguration = SQLiteQuoteStore.Configuration()
        storeConfiguration.synchronousFull = configuration.synchronousFull
        if configuration.checkpointPages > 0 {
            // CheckpointService keeps the log short; the writer steps in only past ~80 MiB.
            storeConfiguration.backgroundCheckpointPages = configuration.checkpointPages
            storeConfiguration.writerCheckpointPages = 20_000
        }
        storeConfiguration.retention = EventRetention(
            minimumAge: .seconds(configuration.retentionHours * 3_600), minimumCount: configuration.retentionEvents)
        let notifier = SystemdNotifier()
        let store: SQLiteQuoteStore
        do {
            // A migration may rewrite every row (v3 took 22 s for 1M quotes): systemd is told
            // to wait for it rather than kill it at TimeoutStartSec, which would roll it back.
            store = try notifier.extendingStartTimeout(status: "opening the store (migrating it if needed)") {
                try SQLiteQuoteStore(
                    path: configuration.databasePath, catalog: catalog, configuration: storeConfiguration,
                    logger: logger)
            }
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(74)
        }
        let violations = try store.integrityViolations()
        for violation in violations {
            logger.error("integrity violation: \(violation.message); run `quoted repair` to fix")
        }
        // What the connection that commits really runs with, read back: a setting lost on
        // the way (GRDB's WAL set-up once reset it) would acknowledge commits not yet durable.
        let configured = configuration.synchronousFull ? "full" : "normal"
        let synchronous = try store.writerSynchronous()
        guard synchronous == configured else {
            logger.critical("cannot start: the store commits with synchronous=\(synchronous), not \(configured)")
            throw ExitCode(74)
        }
        logger.notice(
            "store open",
            metadata: [
                "path": "\(configuration.databasePath)", "mechanics": "\(catalog.mechanics.count)",
                "services": "\(catalog.services.count)", "violations": "\(violations.count)",
                "synchronous": "\(synchronous)",
            ])
        return Startup(configuration: configuration, store: store, notifier: notifier)
    }

    /// Applies what SIGHUP can change: log level and catalog. Reports what needs a restart.
    static func reload(
        options: DaemonOptions, current: DaemonConfiguration, store: SQLiteQuoteStore, level: SharedLogLevel,
        logger: Logger
    ) async {
        do {
            let next = try DaemonConfiguration(reader: try await options.reader())
            level.value = Logger.Level(rawValue: next.logLevel) ?? .info
            let catalog = try CatalogLoader.load(next.catalogFile)
            try store.updateCatalog(catalog)
            var needsRestart: [String] = []
            if next.endpoint != current.endpoint { needsRestart.append("endpoint") }
            if next.events != current.events { needsRestart.append("events") }
            if next.stateDirectory != current.stateDirectory { needsRestart.append("stateDirectory") }
            if next.maxMessageBytes != current.maxMessageBytes { needsRestart.append("maxMessageBytes") }
            if !needsRestart.isEmpty {
                logger.warning("not reloaded, restart to apply: \(needsRestart.joined(separator: ", "))")
            }
            logger.notice(
                "reloaded", metadata: ["logLevel": "\(next.logLevel)", "mechanics": "\(catalog.mechanics.count)"])
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
        }
    }
}
