import QuoteCore
import QuoteStore

/// The catalog one transaction works with: the batch's snapshot, brought up to the store's
/// when a command needs the latest (a name the snapshot does not know, a change to the
/// catalog), and changed by the batch's own catalog commands, each making the next version.
final class BatchCatalog {
    private(set) var catalog: Catalog
    /// The store's version has been read in this transaction, and with `locked`, locked.
    private var checked = false
    private var locked = false
    /// A command of this batch changed the catalog: it is ahead of the store's until the
    /// transaction records it.
    private(set) var changed = false

    init(_ catalog: Catalog) {
        self.catalog = catalog
    }

    /// Brings the catalog up to the store's, and with `forChange`, holds back every other
    /// transaction's change until this one ends; `true` when the store's was newer.
    func refresh(in transaction: any StoreTransaction, forChange: Bool) async throws(StoreError) -> Bool {
        guard !changed, !checked || (forChange && !locked) else { return false }
        let version = try await transaction.catalogVersion(forChange: forChange)
        checked = true
        locked = locked || forChange
        guard version != catalog.version else { return false }
        catalog = try await transaction.catalog()
        return true
    }

    /// Makes `next` the catalog, as the version after the current one.
    func change(to next: Catalog) {
        var next = next
        next.version = catalog.version + 1
        catalog = next
        changed = true
    }
}
