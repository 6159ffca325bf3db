import Foundation
import QuoteCore
import QuoteStore

/// The roster and the catalog, changed live: each change is a command like any other, in the
/// batch's transaction, with its events; the catalog's version goes up by one per change.
/// Every change first brings the batch's catalog up to the store's and holds back other
/// daemons' changes (``BatchCatalog/refresh(in:forChange:)``), so that it applies to the
/// latest.
extension Rulebook {
    /// Adds a mechanic called `name`, on duty and free under a new id, who takes the oldest
    /// waiting quote they can serve at once.
    func addMechanic(
        _ name: String, skill: Skill, catalog: BatchCatalog, with steps: Steps
    ) async throws -> CommandOutcome {
        let transaction = steps.transaction
        _ = try await catalog.refresh(in: transaction, forChange: true)
        if let existing = catalog.catalog.mechanic(named: name) {
            throw QuoteError(.duplicateMechanic, "\(existing.name) is on the roster already (id \(existing.id))")
        }
        let mechanic = Mechanic(id: try await transaction.nextMechanicID(), name: name, skill: skill)
        try await transaction.addMechanic(mechanic)
        catalog.change(to: catalog.catalog.adding(mechanic))
        var events = try await transaction.append([.roster(mechanic, change: .added)], by: steps.actor.name)
        let served = try await serve(mechanic, with: steps)
        events += served
        return CommandOutcome(quote: served.first?.quote, events: events, mechanic: mechanic)
    }

    /// Changes the skill of the mechanic named. Work they hold stays theirs; free and on
    /// duty, they take the oldest waiting quote they can now serve.
    func updateMechanic(
        _ name: String, skill: Skill, catalog: BatchCatalog, with steps: Steps
    ) async throws -> CommandOutcome {
        let transaction = steps.transaction
        _ = try await catalog.refresh(in: transaction, forChange: true)
        let current = try Self.mechanic(named: name, in: catalog.catalog)
        guard current.skill != skill else { return CommandOutcome(quote: nil, events: [], mechanic: current) }
        var updated = current
        updated.skill = skill
        try await transaction.updateMechanic(current.id, skill: skill)
        catalog.change(to: catalog.catalog.replacing(updated))
        var events = try await transaction.append(
            [.roster(updated, change: .updated(from: current.skill))], by: steps.actor.name)
        let served = try await serve(updated, with: steps)
        events += served
        return CommandOutcome(quote: served.first?.quote, events: events, mechanic: updated)
    }

    /// Retires the mechanic named: never booked again. Their history stays, and so does the
    /// quote they are booked on, until it is completed, cancelled or reassigned.
    func retireMechanic(_ name: String, catalog: BatchCatalog, with steps: Steps) async throws -> CommandOutcome {
        let transaction = steps.transaction
        _ = try await catalog.refresh(in: transaction, forChange: true)
        let mechanic = try Self.mechanic(named: name, in: catalog.catalog)
        try await transaction.retireMechanic(mechanic.id)
        catalog.change(to: catalog.catalog.removing(mechanic.id))
        var events = try await transaction.append([.roster(mechanic, change: .retired)], by: steps.actor.name)
        events += try await unqueue(
            waitingFor: mechanic, notice: "\(mechanic.name) no longer works with us.", with: steps)
        return CommandOutcome(quote: nil, events: events, mechanic: mechanic)
    }

    /// Takes every quote waiting for `mechanic` by name out of line, back to ready with
    /// `notice` and a word on what to do: the customer chose that mechanic, who will not come
    /// (or not soon), so booking another is theirs to choose, not quoted's.
    func unqueue(
        waitingFor mechanic: Mechanic, notice: String, with steps: Steps
    ) async throws(StoreError) -> [StoredEvent] {
        let transaction = steps.transaction
        var events: [StoredEvent] = []
        for id in try await transaction.quotesWaiting(for: mechanic.id) {
            guard let waiting = try await transaction.quote(id), case .waiting(_, _, let named?) = waiting.stage,
                named.id == mechanic.id
            else { continue }
            let now = transaction.now
            let ready = try Self.afterWriting { () throws(QuoteError) in
                try waiting.unqueued(notice: notice + " Book again, with another mechanic or anyone free.", at: now)
            }
            events += try await steps.record(ready, replacing: waiting)
        }
        return events
    }

    /// Puts `next` in force as one change: an event per mechanic added, changed or retired,
    /// then `catalog.applied`; free mechanics then serve the wait-list. A change of currency
    /// is refused while any quote is open (it was priced in the old one).
    func applyCatalog(_ next: Catalog, catalog: BatchCatalog, with steps: Steps) async throws -> CommandOutcome {
        let transaction = steps.transaction
        _ = try await catalog.refresh(in: transaction, forChange: true)
        let current = catalog.catalog
        // The same catalog again (an unchanged file) is no change.
        guard current.currency != next.currency || !current.difference(to: next).isEmpty else {
            return CommandOutcome(quote: nil, events: [], catalog: current)
        }
        if next.currency != current.currency, try await transaction.hasOpenQuotes() {
            throw QuoteError(
                .invalidCatalog,
                "the catalog changes the currency from \(current.currency) to \(next.currency) while quotes priced in \(current.currency) are open"
            )
        }
        var changes: [StoredEvent.Kind] = []
        for mechanic in next.mechanics {
            if let before = current.mechanic(id: mechanic.id) {
                if before != mechanic { changes.append(.roster(mechanic, change: .updated(from: before.skill))) }
            } else {
                changes.append(.roster(mechanic, change: .added))
            }
        }
        for mechanic in current.mechanics where next.mechanic(id: mechanic.id) == nil {
            changes.append(.roster(mechanic, change: .retired))
        }
        try await transaction.replaceCatalog(next)
        catalog.change(to: next)
        changes.append(.catalogApplied(version: catalog.catalog.version))
        var events = try await transaction.append(changes, by: steps.actor.name)
        var quote: Quote?
        for mechanic in try await transaction.freeMechanics() {
            let served = try await serve(mechanic, with: steps)
            if let first = served.first?.quote { quote = first }
            events += served
        }
        return CommandOutcome(quote: quote, events: events, catalog: catalog.catalog)
    }

    /// The mechanic on the roster called `name`.
    private static func mechanic(named name: String, in catalog: Catalog) throws(QuoteError) -> Mechanic {
        guard let mechanic = catalog.mechanic(named: name) else {
            throw QuoteError(.unknownMechanic, "no mechanic named \"\(QuoteLimits.echo(name))\"")
        }
        return mechanic
    }
}
