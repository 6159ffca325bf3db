import ArgumentParser
import CatalogFile
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
        let options = options
        try await Startup.run(
            options: options, gracefulShutdownSignals: [.sigterm, .sigint], stoppedNotice: "quoted stopped"
        ) { daemon, level, logger in
            try await Self.serve(daemon, options: options, level: level, logger: logger)
        }
    }

    /// The daemon's services on the open store, as a group within the process's, until its
    /// graceful shutdown.
    private static func serve(
        _ daemon: Startup, options: DaemonOptions, level: SharedLogLevel, logger: Logger
    ) async throws {
        let listening = Mutex<CommandServer?>(nil)
        let observability = Observability(listen: daemon.metricsListen, store: daemon.store, logger: logger) {
            listening.withLock { $0 }?.isListening ?? false
        }
        let server = CommandServer(
            configuration: daemon.configuration, access: daemon.access, store: daemon.store, catalog: daemon.catalog,
            logger: logger, notifier: daemon.notifier, metrics: observability.metrics,
            storeStallLimit: daemon.storeStallLimit)
        listening.withLock { $0 = server }
        let reload = ReloadService(logger: logger) {
            await Startup.reload(
                options: options, current: daemon.configuration, access: daemon.access, store: daemon.store,
                catalog: daemon.catalog, level: level, logger: logger)
            // A mechanic added or back takes from the wait-list.
            server.serveWaitList()
        }
        // Services stop in the reverse of this order: the HTTP side last, so that a client of
        // it that never reads its answers cannot hold the command server's drain back.
        var services: [any ServiceLifecycle.Service] = []
        if let metricsServer = observability.server { services.append(metricsServer) }
        services += [server, reload, PruneService(store: daemon.store, logger: logger)]
        if let checkpoints = daemon.sqlite?.checkpointService(logger: logger) { services.append(checkpoints) }
        StartupMemory.release()
        if StartupMemory.mallocIsMimalloc == false {
            // The figures in docs/benchmarks.md are measured on mimalloc; serving goes on.
            logger.warning("malloc is not mimalloc's: libmimalloc must come before libc in the executable's libraries")
        }
        try await ServiceGroup(configuration: .init(services: services, logger: logger)).run()
    }
}

/// Fixes what the integrity check reports, logging each repair as events.
struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Repair booking invariant violations found at start-up (stop the daemon first).")

    @OptionGroup var options: DaemonOptions

    func run() async throws {
        try await Startup.run(options: options) { daemon, _, logger in
            let violations = try await daemon.store.integrityViolations()
            let repaired = try await Rulebook().repair(violations, catalog: daemon.catalog.current, in: daemon.store)
            for violation in repaired {
                logger.warning("repaired integrity violation", metadata: ["violation": "\(violation.message)"])
            }
            logger.notice("repair finished", metadata: ["repaired": "\(repaired.count)"])
        }
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
    /// How long one store call may go unanswered before the watchdog stops hearing from the
    /// daemon: twice the longest the store is configured to wait, and never under the default.
    var storeStallLimit = CommandServer.defaultStoreStallLimit

    /// Runs `body` on the prepared daemon (configuration read, store open), as a service of
    /// the process's group after the one that runs the PostgreSQL pools. A group shuts its
    /// services down in the reverse of their order: the pools last, once `body` no longer
    /// uses them. `stoppedNotice` is logged once all of them have stopped.
    static func run(
        options: DaemonOptions, gracefulShutdownSignals: [UnixSignal] = [], stoppedNotice: Logger.Message? = nil,
        _ body: @escaping @Sendable (Startup, SharedLogLevel, Logger) async throws -> Void
    ) async throws {
        let (level, logger, sink) = bootstrapLogging()
        // However the process ends (a refusal at start-up included), its last lines are out
        // first: they are what an operator reads to learn why.
        defer { sink.flush(timeout: .seconds(2)) }
        let pools = PostgresPools()
        let work = ClosureService {
            let daemon = try await withGracefulShutdownHandler {
                try await prepareRaisingOpenFiles(options: options, level: level, pools: pools, logger: logger)
            } onGracefulShutdown: {
                // Nothing is acknowledged before start-up ends, and a migration cut short is
                // rolled back: a stop asked for now (say, while another daemon migrates and
                // holds the lock) ends the process at once, as the signal itself once did.
                logger.notice("stopped during start-up")
                sink.flush(timeout: .seconds(2))
                _exit(0)
            }
            // A stop asked for just as start-up ended: the daemon never starts serving.
            guard !Task.isShuttingDownGracefully else { return }
            try await body(daemon, level, logger)
        }
        // `body` returning ends the process: the group shuts the pools down.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: pools),
                    .init(service: work, successTerminationBehavior: .gracefullyShutdownGroup),
                ], gracefulShutdownSignals: gracefulShutdownSignals, logger: logger))
        try await group.run()
        if let stoppedNotice { logger.notice(stoppedNotice) }
    }

    /// Sends every log line to stderr in journald's format, at a level SIGHUP can change,
    /// through a sink that no thread waits for.
    static func bootstrapLogging() -> (SharedLogLevel, Logger, LogSink) {
        let level = SharedLogLevel(.info)
        let sink = LogSink(descriptor: 2)
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level, sink: sink) }
        return (level, Logger(label: "quoted"), sink)
    }

    /// ``prepare(options:level:pools:logger:)`` with the open-files limit raised first, warning when
    /// it is still below what `maxConnections` and the store need.
    static func prepareRaisingOpenFiles(
        options: DaemonOptions, level: SharedLogLevel, pools: PostgresPools, logger: Logger
    ) async throws -> Startup {
        let openFiles = OpenFiles.raise()
        let daemon = try await prepare(options: options, level: level, pools: pools, logger: logger)
        if openFiles < UInt64(daemon.configuration.maxConnections) + 64 {
            logger.warning(
                "the open-files limit is below maxConnections and what the store needs; raise LimitNOFILE",
                metadata: ["openFiles": "\(openFiles)", "maxConnections": "\(daemon.configuration.maxConnections)"])
        }
        return daemon
    }

    /// Reads the configuration, loads the catalog and opens the store, failing fast (exit 78,
    /// EX_CONFIG) with the exact key or file and reason. A PostgreSQL store's pool runs in
    /// `pools`.
    static func prepare(
        options: DaemonOptions, level: SharedLogLevel, pools: PostgresPools, logger: Logger
    ) async throws -> Startup {
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
            try metricsListen?.checkReach()
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
                pools: pools, logger: logger)
            startup.metricsListen = metricsListen
            return startup
        }
        let store: SQLiteQuoteStore
        // Nothing in the process has used SQLite yet.
        SQLiteQuoteStore.configureProcess()
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
        let inForce = try await catalogInForce(
            of: store, file: catalog, path: configuration.catalogFile, logger: logger)
        logger.notice(
            "store open",
            metadata: [
                "path": "\(configuration.databasePath)", "catalogVersion": "\(inForce.version)",
                "mechanics": "\(inForce.mechanics.count)", "services": "\(inForce.services.count)",
                "violations": "\(violations.count)", "synchronous": "\(synchronous)",
            ])
        return Startup(
            configuration: configuration, access: access, store: store, sqlite: store, catalog: LiveCatalog(inForce),
            notifier: notifier, metricsListen: metricsListen,
            storeStallLimit: max(CommandServer.defaultStoreStallLimit, storeConfiguration.busyTimeout * 2))
    }

    /// The store's catalog, in force; a warning when the catalog file says otherwise (the
    /// file seeds an empty store, and afterwards is applied only when asked).
    private static func catalogInForce(
        of store: any QuoteStore, file: Catalog, path: String?, logger: Logger
    ) async throws -> Catalog {
        let inForce: Catalog
        do {
            inForce = try await store.catalog()
        } catch {
            logger.critical("cannot read the store's catalog: \(error)")
            throw ExitCode(74)
        }
        warnIfDifferent(file: file, path: path, inForce: inForce, logger: logger)
        return inForce
    }

    /// Warns that the catalog file differs from the catalog in force, and how.
    private static func warnIfDifferent(file: Catalog, path: String?, inForce: Catalog, logger: Logger) {
        let changes = inForce.difference(to: file)
        guard !changes.isEmpty else { return }
        logger.warning(
            "the catalog file differs from the store's catalog, which stays in force; `quotectl catalog apply \(path ?? "FILE")` puts the file in force",
            metadata: [
                "file": "\(path ?? "built-in")", "catalogVersion": "\(inForce.version)", "changes": "\(changes.count)",
                "first": "\(changes.prefix(5).joined(separator: "; "))",
            ])
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
        catalog: Catalog, notifier: SystemdNotifier, pools: PostgresPools, logger: Logger
    ) async throws -> Startup {
        let store: PostgresQuoteStore
        do {
            store = try await PostgresQuoteStore.open(
                configuration: postgres, catalog: catalog, pools: pools, logger: logger)
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(74)
        }
        let violations = try await reportViolations(of: store, logger: logger)
        let inForce = try await catalogInForce(
            of: store, file: catalog, path: configuration.catalogFile, logger: logger)
        logger.notice(
            "store open",
            metadata: [
                "store": "postgresql", "database": "\(postgres.redactedURL)", "catalogVersion": "\(inForce.version)",
                "mechanics": "\(inForce.mechanics.count)", "services": "\(inForce.services.count)",
                "violations": "\(violations.count)",
            ])
        return Startup(
            configuration: configuration, access: access, store: store, sqlite: nil, catalog: LiveCatalog(inForce),
            notifier: notifier,
            storeStallLimit: max(
                CommandServer.defaultStoreStallLimit, (postgres.acquireTimeout + postgres.transactionTimeout) * 2))
    }

    /// Applies what SIGHUP can change: log level and the clients allowed. Compares the
    /// catalog file with the catalog in force (warning when they differ), and reports what
    /// needs a restart.
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
            // The file is an import: compared, never applied behind the other daemons' backs.
            let catalog = try CatalogLoader.load(next.catalogFile)
            warnIfDifferent(file: catalog, path: next.catalogFile, inForce: live.current, logger: logger)
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
            logger.notice("reloaded", metadata: ["logLevel": "\(next.logLevel)"])
        } catch {
            logger.error("reload failed, keeping the running configuration: \(error)")
        }
    }
}
