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
        guard let id = try await transaction.nextMechanicID(), id.rawValue <= MechanicID.maximum.rawValue else {
            throw QuoteError(.invalidCatalog, "no mechanic id is left: the largest, \(MechanicID.maximum), is taken")
        }
        let mechanic = Mechanic(id: id, name: name, skill: skill)
        try await transaction.addMechanic(mechanic)
        catalog.change(to: catalog.catalog.adding(mechanic))
        var events = try await transaction.append([.roster(mechanic, change: .added)], by: steps.actor.name)
        let served = try await serve(mechanic, with: steps)
        events += served
        return CommandOutcome(quote: served.first?.quote, events: events, mechanic: mechanic)
    }

    /// Changes the skill of the mechanic named. Work they hold stays theirs; quotes waiting
    /// for them by name that they can no longer do go back to ready, told why; free and on
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
        if skill < current.skill { events += try await unqueue(beyond: updated, with: steps) }
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
        // A catalog lists one mechanic at least: the last is replaced, not retired.
        guard catalog.catalog.mechanics.count > 1 else {
            throw QuoteError(
                .invalidCatalog, "\(mechanic.name) is the last mechanic on the roster; add another before retiring them"
            )
        }
        try await transaction.retireMechanic(mechanic.id)
        catalog.change(to: catalog.catalog.removing(mechanic.id))
        var events = try await transaction.append([.roster(mechanic, change: .retired)], by: steps.actor.name)
        events += try await unqueue(
            waitingFor: mechanic, notice: "\(mechanic.name) no longer works with us.", with: steps)
        return CommandOutcome(quote: nil, events: events, mechanic: mechanic)
    }

    /// Takes the quotes waiting for `mechanic` by name whose work is beyond their skill now
    /// out of line, back to ready, told why.
    func unqueue(beyond mechanic: Mechanic, with steps: Steps) async throws(StoreError) -> [StoredEvent] {
        try await unqueue(
            waitingFor: mechanic, notice: "\(mechanic.name) can no longer do this work.", with: steps,
            where: { $0.request.requiredSkill > mechanic.skill })
    }

    /// Takes every quote waiting for `mechanic` by name (that `included` picks) out of line,
    /// back to ready with `notice` and a word on what to do: the customer chose that mechanic,
    /// who will not come (or not soon, or cannot do it), so booking another is theirs to
    /// choose, not quoted's.
    func unqueue(
        waitingFor mechanic: Mechanic, notice: String, with steps: Steps,
        where included: (Quote) -> Bool = { _ in true }
    ) async throws(StoreError) -> [StoredEvent] {
        let transaction = steps.transaction
        var events: [StoredEvent] = []
        for id in try await transaction.quotesWaiting(for: mechanic.id) {
            guard let waiting = try await transaction.quote(id), case .waiting(_, _, let named?) = waiting.stage,
                named.id == mechanic.id, included(waiting)
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
            return CommandOutcome(quote: nil, events: [], catalogVersion: current.version)
        }
        if next.currency != current.currency, try await transaction.hasOpenQuotes() {
            throw QuoteError(
                .invalidCatalog,
                "the catalog changes the currency from \(current.currency) to \(next.currency) while quotes priced in \(current.currency) are open"
            )
        }
        var changes: [StoredEvent.Kind] = []
        var lowered: [Mechanic] = []
        for mechanic in next.mechanics {
            if let before = current.mechanic(id: mechanic.id) {
                if before != mechanic { changes.append(.roster(mechanic, change: .updated(from: before.skill))) }
                if mechanic.skill < before.skill { lowered.append(mechanic) }
            } else {
                changes.append(.roster(mechanic, change: .added))
            }
        }
        let retired = current.mechanics.filter { next.mechanic(id: $0.id) == nil }
        changes += retired.map { .roster($0, change: .retired) }
        try await transaction.replaceCatalog(next)
        catalog.change(to: next)
        changes.append(.catalogApplied(version: catalog.catalog.version))
        var events = try await transaction.append(changes, by: steps.actor.name)
        // Those waiting for a mechanic by name who left, or can no longer do their work.
        for mechanic in retired {
            events += try await unqueue(
                waitingFor: mechanic, notice: "\(mechanic.name) no longer works with us.", with: steps)
        }
        for mechanic in lowered { events += try await unqueue(beyond: mechanic, with: steps) }
        var quote: Quote?
        for mechanic in try await transaction.freeMechanics() {
            let served = try await serve(mechanic, with: steps)
            if let first = served.first?.quote { quote = first }
            events += served
        }
        return CommandOutcome(quote: quote, events: events, catalogVersion: catalog.catalog.version)
    }

    /// The mechanic on the roster called `name`.
    private static func mechanic(named name: String, in catalog: Catalog) throws(QuoteError) -> Mechanic {
        guard let mechanic = catalog.mechanic(named: name) else {
            throw QuoteError(.unknownMechanic, "no mechanic named \"\(QuoteLimits.echo(name))\"")
        }
        return mechanic
    }
}
