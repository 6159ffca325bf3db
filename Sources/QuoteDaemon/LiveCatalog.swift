public import QuoteCore
import Synchronization

/// The catalog in force, the store's, shared by the thread that checks requests against it
/// and the parts that learn of a newer version: this daemon's own commits and, on a shared
/// store, the other daemons' (read from the log). Versions only go forward.
public final class LiveCatalog: Sendable {
    private let catalog: Mutex<Catalog>

    /// Holds `catalog` until replaced.
    public init(_ catalog: Catalog) {
        self.catalog = Mutex(catalog)
    }

    /// The catalog of this moment.
    public var current: Catalog { catalog.withLock { $0 } }

    /// Puts `catalog` in force for every batch begun from now on, if it is newer than the
    /// one in force; returns whether it was.
    @discardableResult
    public func advance(to catalog: Catalog) -> Bool {
        self.catalog.withLock { current in
            guard catalog.version > current.version else { return false }
            current = catalog
            return true
        }
    }
}
