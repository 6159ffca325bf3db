import CoreMetrics
import Foundation
import Logging
import Prometheus
import QuoteDaemon
import QuoteMetricsServer
import QuoteStore
import Synchronization

/// What the daemon measures and, with `metrics.listen`, the HTTP server that exports it: the
/// one place that picks Prometheus as the backend.
struct Observability {
    let metrics: DaemonMetrics
    /// The HTTP server, when `metrics.listen` is set.
    let server: MetricsServer?

    /// Without `listen`, metrics go nowhere (``DaemonMetrics`` still keeps `stats`' totals).
    init(
        listen: MetricsServer.Configuration?, store: any QuoteStore, logger: Logger,
        commands: @escaping @Sendable () -> Bool
    ) {
        guard let listen else {
            metrics = .unexported()
            server = nil
            return
        }
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            DaemonMetrics.Name.requestDuration: DaemonMetrics.durationBounds,
            DaemonMetrics.Name.commitDuration: DaemonMetrics.durationBounds,
        ]
        factory.valueHistogramBuckets = [DaemonMetrics.Name.batchSize: DaemonMetrics.batchSizeBounds]
        let metrics = DaemonMetrics(factory: factory)
        self.metrics = metrics
        // Each store read behind the HTTP side runs once at a time, its answer shared by every
        // request meanwhile and reused for a second: a flood of scrapes or probes costs the
        // store one read a second, not a backlog of them.
        let lastSequence = Self.shared { () async throws(StoreError) in _ = try await store.lastSequence() }
        let gauges = Self.shared { () async throws(StoreError) in try await metrics.refreshStoreGauges(from: store) }
        server = MetricsServer(
            configuration: listen, registry: registry, process: ProcessMetrics(factory: factory), logger: logger,
            readiness: {
                guard commands() else { return .notReady("the command and event sockets are not bound") }
                switch await Self.within(.seconds(2), lastSequence.value) {
                case .none: return .notReady("the store did not answer within 2 s")
                case .some(.failure(let error)): return .notReady("the store is unavailable: \(error.message)")
                case .some(.success): return .ready
                }
            },
            beforeScrape: {
                if case .some(.failure(let error)) = await Self.within(.seconds(2), gauges.value) {
                    logger.warning("metrics: store gauges not refreshed", metadata: ["error": "\(error)"])
                }
            })
    }

    /// `read`, run once at a time and its outcome reused for a second.
    private static func shared(
        _ read: @escaping @Sendable () async throws(StoreError) -> Void
    ) -> SharedRefresh<Result<Void, StoreError>> {
        SharedRefresh(freshFor: .seconds(1)) { () async -> Result<Void, StoreError> in
            do throws(StoreError) {
                try await read()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
    }

    /// What `body` came to, or `nil` when it took longer than `limit`. `body` is not cancelled
    /// (a store request is not), only no longer waited for.
    static func within(
        _ limit: Duration, _ body: @escaping @Sendable () async -> Result<Void, StoreError>
    ) async -> Result<Void, StoreError>? {
        let first = Mutex<CheckedContinuation<Result<Void, StoreError>?, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            first.withLock { $0 = continuation }
            let finish: @Sendable (Result<Void, StoreError>?) -> Void = { result in
                first.withLock { $0.take() }?.resume(returning: result)
            }
            Task { finish(await body()) }
            Task {
                try? await Task.sleep(for: limit)
                finish(nil)
            }
        }
    }
}
