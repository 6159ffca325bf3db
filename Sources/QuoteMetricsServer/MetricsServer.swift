import Hummingbird
import HummingbirdCore
public import Logging
public import Prometheus
public import ServiceLifecycle

/// The daemon's HTTP side, for machines: `/metrics` (Prometheus text format, from a
/// `PrometheusCollectorRegistry`), `/healthz` (the process answers) and `/readyz` (200 when
/// ``Readiness`` says so, 503 with the reason otherwise). Hummingbird serves it; it runs as a
/// `Service`, stops on graceful shutdown, and knows nothing of stores or sockets: what it
/// reports comes from the closures it is given. Whoever reaches its port gets at most
/// ``maximumConnections`` connections, closed after ``idleTimeout`` idle, with headers of at
/// most ``maximumHeaderBytes``.
public struct MetricsServer: ServiceLifecycle.Service {
    /// Whether the daemon can do its work, with the reason when it cannot.
    public enum Readiness: Sendable, Equatable {
        case ready
        case notReady(String)
    }

    private let configuration: Configuration
    private let registry: PrometheusCollectorRegistry
    private let process: ProcessMetrics
    private let readiness: @Sendable () async -> Readiness
    private let beforeScrape: @Sendable () async -> Void
    private let onListening: @Sendable (String) -> Void
    private let logger: Logger

    /// A server for `registry`'s metrics on `configuration.host:port`.
    /// - Parameters:
    ///   - configuration: where to listen.
    ///   - registry: the metrics served at `/metrics`.
    ///   - process: the process's own figures (CPU, memory), refreshed at each scrape.
    ///   - readiness: asked on each `/readyz`.
    ///   - beforeScrape: brings gauges read from elsewhere (the store) up to date before each
    ///     `/metrics`; what it cannot read in time stays as it was.
    ///   - logger: where the server logs.
    ///   - onListening: told `host:port` once bound (the port resolved when it was 0).
    public init(
        configuration: Configuration, registry: PrometheusCollectorRegistry, process: ProcessMetrics,
        logger: Logger, readiness: @escaping @Sendable () async -> Readiness,
        beforeScrape: @escaping @Sendable () async -> Void = {},
        onListening: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.registry = registry
        self.process = process
        self.readiness = readiness
        self.beforeScrape = beforeScrape
        self.onListening = onListening
        self.logger = logger
    }

    /// Serves until graceful shutdown (or cancellation), then closes the listener.
    public func run() async throws {
        let router = Router()
        router.get("metrics") { [registry, process, beforeScrape] _, _ -> Response in
            await beforeScrape()
            process.refresh()
            var body: [UInt8] = []
            registry.emit(into: &body)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("healthz") { _, _ -> Response in
            Self.text(.ok, "alive\n")
        }
        router.get("readyz") { [readiness] _, _ -> Response in
            switch await readiness() {
            case .ready: Self.text(.ok, "ready\n")
            case .notReady(let reason): Self.text(.serviceUnavailable, "not ready: \(reason)\n")
            }
        }
        // Bounds for whoever reaches the port: a few connections (scrapers and probes are few),
        // closed when idle, with small headers. At the limit, new connections wait in the
        // listen backlog: a flood holds neither descriptors nor memory the daemon needs.
        let http = HTTP1Channel.Configuration(
            idleTimeout: .seconds(Int64(Self.idleTimeout.components.seconds)),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: Self.maximumHeaderBytes, maxHeaderListSize: Self.maximumHeaderBytes,
                maxHeaderFieldCount: 64))
        let app = Application(
            router: router,
            server: .http1(configuration: http),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: .maximum(Self.maximumConnections, logger: logger)),
            onServerRunning: { [logger, onListening] channel in
                let address = channel.localAddress
                let listening = "\(address?.ipAddress ?? "?"):\(address?.port ?? 0)"
                logger.notice("metrics listening", metadata: ["metrics": "\(listening)"])
                onListening(listening)
            },
            logger: logger
        )
        try await app.run()
    }

    /// The most connections served at once; more wait to be accepted.
    public static let maximumConnections = 64
    /// How long a connection may stay idle (nothing asked) before it is closed.
    public static let idleTimeout: Duration = .seconds(10)
    /// The most header bytes a request may have.
    public static let maximumHeaderBytes = 8_192

    private static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
