import CoreMetrics
import Foundation
import QuoteCore
public import QuoteStore
import Synchronization

extension DaemonMetrics {
    /// Reads the store's state into the gauges: quotes by state, mechanics busy and free, the
    /// wait-list's length and how long its first has waited. Called before each scrape, not
    /// per batch (`StoreState`). Throws what the store threw, leaving
    /// the gauges as they were.
    public func refreshStoreGauges(from store: any QuoteStore) async throws(StoreError) {
        // First: a store that has lost its server is when these matter.
        let availability = store.availability
        let (failovers, down) = reportedAvailability.withLock { reported in
            defer { reported = availability }
            return (
                max(0, availability.failovers - reported.failovers),
                max(0, availability.downSeconds - reported.downSeconds)
            )
        }
        if failovers > 0 { storeFailovers.increment(by: failovers) }
        if down > 0 { storeDownSeconds.increment(by: down) }
        let state = try await StoreState.read(from: store)
        for (status, gauge) in quotes { gauge.record(state.counts[status] ?? 0) }
        mechanicsBusy.record(state.busy)
        mechanicsFree.record(state.free)
        mechanicsOffDuty.record(state.offDuty)
        waitingQuotes.record(state.counts[.waiting] ?? 0)
        oldestWait.record(state.oldestWaiting.map { max(0, Date().timeIntervalSince($0)) } ?? 0)
    }
}
