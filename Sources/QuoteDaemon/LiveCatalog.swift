public import QuoteCore
import Synchronization

/// The catalog in force, shared by the thread that checks requests against it and the
/// reload that replaces it. Each batch takes one snapshot, so a reload never splits a batch.
public final class LiveCatalog: Sendable {
    private let catalog: Mutex<Catalog>

    /// Holds `catalog` until replaced.
    public init(_ catalog: Catalog) {
        self.catalog = Mutex(catalog)
    }

    /// The catalog of this moment.
    public var current: Catalog { catalog.withLock { $0 } }

    /// Puts `catalog` in force for every batch begun from now on.
    public func replace(with catalog: Catalog) {
        self.catalog.withLock { $0 = catalog }
    }
}
