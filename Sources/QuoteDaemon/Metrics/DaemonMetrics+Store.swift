import CoreMetrics
import Foundation
import QuoteCore
public import QuoteStore

extension DaemonMetrics {
    /// Reads the store's state into the gauges: quotes by state, mechanics busy and free, the
    /// wait-list's length and how long its first has waited. Called before each scrape, not
    /// per batch: four reads, on the store's read side. Throws what the store threw, leaving
    /// the gauges as they were.
    public func refreshStoreGauges(from store: any QuoteStore) async throws(StoreError) {
        let counts = try await store.counts()
        let mechanics = try await store.mechanics()
        let first = try await store.waitingQuotes(limit: 1).first
        for (status, gauge) in quotes { gauge.record(counts[status] ?? 0) }
        let busy = mechanics.count { !$0.isFree }
        mechanicsBusy.record(busy)
        mechanicsFree.record(mechanics.count - busy)
        waitingQuotes.record(counts[.waiting] ?? 0)
        oldestWait.record(first?.waitingSince.map { max(0, Date().timeIntervalSince($0)) } ?? 0)
    }
}
