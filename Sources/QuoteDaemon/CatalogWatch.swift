import Logging
import QuoteCore
import QuoteStore

/// Watches, on a shared store, whether this daemon still prices and dispatches with the
/// catalog the others applied last (`QuoteStore.catalogFingerprint()`): when another daemon
/// loads a different catalog, this one says so in its log until the two agree again.
struct CatalogWatch: Sendable {
    let store: any QuoteStore
    let catalog: LiveCatalog
    let logger: Logger
    var interval: Duration = .seconds(10)

    /// Compares every ``interval`` until cancelled.
    func run() async {
        var diverged = false
        while (try? await Task.sleep(for: interval)) != nil {
            guard let shared = try? await store.catalogFingerprint() else { continue }
            let own = catalog.current.fingerprint
            if shared != own && !diverged {
                logger.warning(
                    "another daemon applied a different catalog: this one prices and dispatches with its own until reloaded",
                    metadata: ["catalog": "\(own)", "shared": "\(shared)"])
            } else if shared == own && diverged {
                logger.notice("this daemon's catalog is the shared one again", metadata: ["catalog": "\(own)"])
            }
            diverged = shared != own
        }
    }
}
