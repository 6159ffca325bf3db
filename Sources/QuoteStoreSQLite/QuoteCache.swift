import Foundation
import QuoteCore

/// The quotes the writer connection last wrote or read, decoded, with their history bytes: a
/// booking and its completion each load a quote that an earlier transaction wrote, and reading
/// its row back and decoding it cost about a tenth of each.
///
/// It keeps the quotes a transaction reads or updates, not those it inserts: a new quote is
/// seldom read again soon, and keeping it would cost every submission. It only ever holds what
/// the database holds:
/// - what a transaction keeps is kept at once, for the rest of it, and dropped if it rolls
///   back, even to a savepoint (``discardTransaction()``);
/// - another connection's commit (another process on the same file) changes the file's
///   `PRAGMA data_version`, read under the write lock before a transaction's first use of the
///   cache: then it is emptied (``begin(dataVersion:)``).
///
/// Its size is bounded in bytes (an estimate from each quote's stored size, ``budget``): the
/// oldest entries make room for each new one, as many as it takes. Owned by the writer's
/// thread: taken by each transaction and given back when it ends.
struct QuoteCache {
    /// A quote as its row holds it.
    struct Entry {
        let quote: Quote
        let history: [UInt8]
        /// What the entry is reckoned to take in memory, on the safe side: the decoded quote
        /// (its strings, some twice, and their headers) four times its stored bytes, its
        /// history, and fixed overheads.
        let cost: Int
        /// When it was kept, for eviction in that order.
        fileprivate var serial: UInt64 = 0

        init(quote: Quote, stored: Int, history: [UInt8]) {
            self.quote = quote
            self.history = history
            cost = 4 * stored + history.count + 512
        }
    }

    /// The most memory, in bytes as ``Entry/cost`` reckons it, that the entries take.
    let budget: Int
    /// The `PRAGMA data_version` the entries were known at.
    private var dataVersion: Int64?
    private var entries: [Int64: Entry] = [:]
    private var cost = 0
    /// Entries in the order they were kept (an id with the serial it was kept under; a later
    /// entry for the same id makes the earlier one stale), oldest from ``oldest`` on.
    private var order: [(id: Int64, serial: UInt64)] = []
    private var oldest = 0
    private var serial: UInt64 = 0
    /// The quotes the open transaction kept: dropped unless it commits.
    private var touched: [Int64] = []

    /// An empty cache holding at most `budget` bytes.
    init(budget: Int) {
        self.budget = max(budget, 0)
    }

    /// How many quotes it holds.
    var count: Int { entries.count }

    /// How many places the eviction order holds, stale ones included: at most about twice
    /// ``count``, plus a constant.
    var orderCount: Int { order.count - oldest }

    /// A transaction begins to use the cache, with the file's `PRAGMA data_version` as it reads
    /// now: if another connection committed since the cache was last used, nothing held is
    /// trusted.
    mutating func begin(dataVersion: Int64) {
        // Only a transaction that neither committed nor said it failed leaves any.
        discardTransaction()
        if dataVersion != self.dataVersion {
            clear()
            self.dataVersion = dataVersion
        }
    }

    /// Quote `id` as the open transaction sees it, if held.
    func entry(_ id: Int64) -> Entry? {
        entries[id]
    }

    /// The open transaction wrote quote `id` as `entry`, or read it so from its row.
    mutating func keep(_ id: Int64, _ entry: Entry) {
        guard entry.cost <= budget else {
            forget(id)
            return
        }
        // The oldest go first, as many as it takes to make room (the entry it replaces, if
        // any, makes room too).
        let replaced = entries[id]?.cost ?? 0
        while cost - replaced + entry.cost > budget, oldest < order.count {
            let (evicted, kept) = order[oldest]
            oldest += 1
            if evicted != id, entries[evicted]?.serial == kept { forget(evicted) }
        }
        // Places left stale (a quote kept again, or forgotten) are dropped once they are as
        // many as the live ones: the order stays proportional to the entries.
        if order.count - oldest > 2 * entries.count + 1_024 {
            order = order[oldest...].filter { entries[$0.id]?.serial == $0.serial }
            oldest = 0
        } else if oldest > 1_024 && oldest * 2 > order.count {
            order.removeFirst(oldest)
            oldest = 0
        }
        var entry = entry
        serial &+= 1
        entry.serial = serial
        if let old = entries.updateValue(entry, forKey: id) { cost -= old.cost }
        cost += entry.cost
        order.append((id, serial))
        touched.append(id)
    }

    /// The open transaction rolled back, to a savepoint or whole, or its outcome is unknown:
    /// whatever it kept may not be in the rows (what it kept before a savepoint is dropped as
    /// well, to keep it simple).
    mutating func discardTransaction() {
        for id in touched { forget(id) }
        touched.removeAll(keepingCapacity: true)
    }

    /// The open transaction committed: what it kept is in the rows.
    mutating func commit() {
        touched.removeAll(keepingCapacity: true)
    }

    /// Forgets everything, the data version included.
    mutating func clear() {
        entries.removeAll()
        order.removeAll()
        touched.removeAll()
        oldest = 0
        cost = 0
        dataVersion = nil
    }

    private mutating func forget(_ id: Int64) {
        if let old = entries.removeValue(forKey: id) { cost -= old.cost }
    }
}
