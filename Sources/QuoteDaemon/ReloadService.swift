public import Logging
public import ServiceLifecycle
import UnixSignals

/// Waits for SIGHUP and runs the reload it was given: what can change while running (log
/// level, catalog) changes; what cannot (endpoints, state directory) is reported.
public struct ReloadService: Service {
    private let reload: @Sendable () async -> Void
    private let logger: Logger

    /// Creates the service around `reload`.
    public init(logger: Logger, reload: @escaping @Sendable () async -> Void) {
        self.reload = reload
        self.logger = logger
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        for await _ in signals.cancelOnGracefulShutdown() {
            logger.notice("SIGHUP: reloading configuration")
            await reload()
        }
    }
}
