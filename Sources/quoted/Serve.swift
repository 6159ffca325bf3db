import ArgumentParser
import Configuration
import Foundation
import Logging
import QuoteCore
import QuoteDaemon
import QuoteMetricsServer
import QuoteRules
import QuoteStore
import QuoteStorePostgres
import QuoteStoreSQLite
import ServiceLifecycle
import Synchronization
import UnixSignals

/// Runs the daemon in the foreground until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve quotes (the default).")

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        let (level, logger) = Startup.bootstrapLogging()
        let daemon = try await Startup.prepareRaisingOpenFiles(options: options, level: level, logger: logger)

        let listening = Mutex<CommandServer?>(nil)
        let observability = Observability(listen: daemon.metricsListen, store: daemon.store, logger: logger) {
            listening.withLock { $0 }?.isListening ?? false
        }
        let server = CommandServer(
            configuration: daemon.configuration, access: daemon.access, store: daemon.store, catalog: daemon.catalog,
            logger: logger, notifier: daemon.notifier, metrics: observability.metrics)
        listening.withLock { $0 = server }
        let reload = ReloadService(logger: logger) {
            await Startup.reload(
                options: options, current: daemon.configuration, access: daemon.access, store: daemon.store,
                catalog: daemon.catalog, level: level, logger: logger)
            // A mechanic added or back takes from the wait-list.
            server.serveWaitList()
        }
        var services: [any ServiceLifecycle.Service] = [
            server, reload, PruneService(store: daemon.store, logger: logger),
        ]
        if let metricsServer = observability.server { services.append(metricsServer) }
        if let trigger = daemon.sqlite?.checkpointTrigger {
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
        let daemon = try await Startup.prepareRaisingOpenFiles(options: options, level: level, logger: logger)
        let violations = try await daemon.store.integrityViolations()
        let repaired = try await Rulebook().repair(violations, catalog: daemon.catalog.current, in: daemon.store)
        for violation in repaired {
            logger.warning("repaired integrity violation", metadata: ["violation": "\(violation.message)"])
        }
        logger.notice("repair finished", metadata: ["repaired": "\(repaired.count)"])
    }
}

/// What start-up produces: the validated configuration, the allow-list, the catalog and the
/// open store. The one place that picks which store quoted runs on: PostgreSQL when
/// `store.postgres.url` is set, else the embedded SQLite file.
struct Startup {
    let configuration: DaemonConfiguration
    /// With `security`: the server's keys and the clients allowed.
    let access: AccessControl?
    let store: any QuoteStore
    /// The store when it is SQLite, for what only SQLite has (its checkpoints).
    let sqlite: SQLiteQuoteStore?
    let catalog: LiveCatalog
    let notifier: SystemdNotifier
    /// Where `/metrics`, `/healthz` and `/readyz` are served; `nil` for none.
    var metricsListen: MetricsServer.Configuration? = nil

    /// Sends every log line to stderr in journald's format, at a level SIGHUP can change.
    static func bootstrapLogging() -> (SharedLogLevel, Logger) {
        let level = SharedLogLevel(.info)
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level) }
        return (level, Logger(label: "quoted"))
    }

    /// ``prepare(options:level:logger:)`` with the open-files limit raised first, warning when
    /// it is still below what `maxConnections` and the store need.
    static func prepareRaisingOpenFiles(
        options: DaemonOptions, level: SharedLogLevel, logger: Logger
    ) async throws -> Startup {
        let openFiles = OpenFiles.raise()
        let daemon = try await prepare(options: options, level: level, logger: logger)
        if openFiles < UInt64(daemon.configuration.maxConnections) + 64 {
            logger.warning(
                "the open-files limit is below maxConnections and what the store needs; raise LimitNOFILE",
                metadata: ["openFiles": "\(openFiles)", "maxConnections": "\(daemon.configuration.maxConnections)"])
        }
        return daemon
    }

    /// Reads the configuration, loads the catalog and opens the store, failing fast (exit 78,
    /// EX_CONFIG) with the exact key or file and reason.
    static func prepare(options: DaemonOptions, level: SharedLogLevel, logger: Logger) async throws -> Startup {
        let configuration: DaemonConfiguration
        var storeConfiguration: SQLiteQuoteStore.Configuration
        var postgresConfiguration: PostgresQuoteStore.Configuration?
        let catalog: Catalog
        var access: AccessControl?
        let metricsListen: MetricsServer.Configuration?
        do {
            let reader = try await options.reader()
            configuration = try DaemonConfiguration(reader: reader)
            if reader.string(forKey: "store.postgres.url") != nil {
                postgresConfiguration = try PostgresQuoteStore.Configuration(
                    reader: reader.scoped(to: "store.postgres"))
            }
            if let serverKey = configuration.serverKeyFile, let clients = configuration.clientsDirectory {
                access = try AccessControl(serverKeyFile: serverKey, clientsDirectory: clients, logger: logger)
            }
            storeConfiguration = try SQLiteQuoteStore.Configuration(reader: reader.scoped(to: "store.sqlite"))
            metricsListen = try MetricsServer.Configuration(reader: reader.scoped(to: "metrics"))
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
        storeConfiguration.retention = EventRetention(
            minimumAge: .seconds(configuration.retentionHours * 3_600), minimumCount: configuration.retentionEvents)
        let notifier = SystemdNotifier()
        if var postgres = postgresConfiguration {
            postgres.retention = storeConfiguration.retention
            var startup = try await openPostgres(
                postgres, configuration: configuration, access: access, catalog: catalog, notifier: notifier,
                logger: logger)
            startup.metricsListen = metricsListen
            return startup
        }
        let store: SQLiteQuoteStore
        do {
            // A migration may rewrite every row (README, "Upgrades"): systemd is told to wait
            // for it rather than kill it at TimeoutStartSec, which would roll it back.
            store = try notifier.extendingStartTimeout(status: "opening the store (migrating it if needed)") {
                try SQLiteQuoteStore(
                    path: configuration.databasePath, catalog: catalog, configuration: storeConfiguration,
                    logger: logger)
            }
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(74)
        }
        let violations = try await reportViolations(of: store, logger: logger)
        // What the connection that commits really runs with, read back: a setting lost on
        // the way (GRDB's WAL set-up once reset it) would acknowledge commits not yet durable.
        let configured = storeConfiguration.synchronousFull ? "full" : "normal"
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
        return Startup(
            configuration: configuration, access: access, store: store, sqlite: store, catalog: LiveCatalog(catalog),
            notifier: notifier, metricsListen: metricsListen)
    }

    /// Logs each booking invariant the store finds broken (repaired only by `quoted repair`).
    private static func reportViolations(of store: any QuoteStore, logger: Logger) async throws
        -> [IntegrityViolation]
    {
        let violations = try await store.integrityViolations()
        for violation in violations {
            logger.error("integrity violation: \(violation.message); run `quoted repair` to fix")
        }
        return violations
    }

    /// Opens the PostgreSQL store (migrating it if this daemon is the first to start on a new
    /// version) and checks its integrity.
    private static func openPostgres(
        _ postgres: PostgresQuoteStore.Configuration, configuration: DaemonConfiguration, access: AccessControl?,
        catalog: Catalog, notifier: SystemdNotifier, logger: Logger
    ) async throws -> Startup {
        let store: PostgresQuoteStore
        do {
            store = try await PostgresQuoteStore.open(configuration: postgres, catalog: catalog, logger: logger)
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(74)
        }
        let violations = try await reportViolations(of: store, logger: logger)
        logger.notice(
            "store open",
            metadata: [
                "store": "postgresql", "database": "\(postgres.redactedURL)", "mechanics": "\(catalog.mechanics.count)",
                "services": "\(catalog.services.count)", "violations": "\(violations.count)",
            ])
        return Startup(
            configuration: configuration, access: access, store: store, sqlite: nil, catalog: LiveCatalog(catalog),
            notifier: notifier)
    }

    /// Applies what SIGHUP can change: log level, catalog and the clients allowed. Reports
    /// what needs a restart.
    static func reload(
        options: DaemonOptions, current: DaemonConfiguration, access: AccessControl?, store: any QuoteStore,
        catalog live: LiveCatalog, level: SharedLogLevel, logger: Logger
    ) async {
        // The allow-list on its own, failing closed: removals always apply; a bad file is
        // skipped (and named), never keeping a withdrawn key in.
        if let access {
            let change = access.reload()
            let metadata: Logger.Metadata = [
                "clients": "\(access.principals.count)", "added": "\(change.added)", "removed": "\(change.removed)",
                "skipped": "\(change.skipped.count)",
            ]
            if change.skipped.isEmpty {
                logger.notice("clients reloaded", metadata: metadata)
            } else {
                logger.error("clients reloaded; files skipped, no one gains access through them", metadata: metadata)
            }
        }
        do {
            let next = try DaemonConfiguration(reader: try await options.reader())
            level.value = Logger.Level(rawValue: next.logLevel) ?? .info
            let catalog = try CatalogLoader.load(next.catalogFile)
            let inForce = live.current.currency
            if catalog.currency != inForce {
                // Quotes not yet completed or cancelled are priced in the currency in force;
                // resolving or booking them against another would mix the two.
                let open = try await store.counts().filter { !$0.key.isFinal }.values.reduce(0, +)
                if open > 0 {
                    logger.error(
                        "reload refused: the catalog changes the currency from \(inForce) to \(catalog.currency) while \(open) quotes priced in \(inForce) are still open; the catalog in force stays",
                        metadata: ["from": "\(inForce)", "to": "\(catalog.currency)", "openQuotes": "\(open)"])
                    return
                }
            }
            // The store first: a mechanic is active there before any batch can name them.
            try await store.syncCatalog(catalog)
            live.replace(with: catalog)
            var needsRestart: [String] = []
            if next.endpoint != current.endpoint { needsRestart.append("endpoint") }
            if next.events != current.events { needsRestart.append("events") }
            if next.stateDirectory != current.stateDirectory { needsRestart.append("stateDirectory") }
            if next.maxMessageBytes != current.maxMessageBytes { needsRestart.append("maxMessageBytes") }
            if next.serverKeyFile != current.serverKeyFile { needsRestart.append("security.serverKey") }
            if next.clientsDirectory != current.clientsDirectory { needsRestart.append("security.clientsDirectory") }
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
