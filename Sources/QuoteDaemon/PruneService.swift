import Foundation
public import Logging
public import QuoteStore
public import ServiceLifecycle

/// Prunes the event log to what the retention promises, at start and then every `interval`,
/// until graceful shutdown. The store serializes each prune with the writes.
public struct PruneService: Service {
    private let store: any QuoteStore
    private let interval: Duration
    private let logger: Logger

    /// Creates the service for `store`.
    public init(store: any QuoteStore, interval: Duration = .seconds(60), logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let pruned = try await store.pruneEvents(now: Date())
                if pruned > 0 { logger.info("pruned old events", metadata: ["count": "\(pruned)"]) }
            } catch {
                logger.warning("event pruning failed", metadata: ["error": "\(error)"])
            }
            // Ends early on graceful shutdown or cancellation.
            let interval = interval
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
