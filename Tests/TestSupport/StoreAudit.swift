import QuoteCore
public import QuoteStore

/// Replays `events` and reports every moment a mechanic was claimed while held or after
/// they retired, or released by a quote that did not hold them.
public func doubleBookings(in events: [StoredEvent]) -> [String] {
    var holder: [MechanicID: QuoteID] = [:]
    var retired: Set<MechanicID> = []
    var problems: [String] = []
    for event in events {
        switch event.kind {
        case .mechanicBusy(let mechanic, let quote):
            if let current = holder[mechanic.id] {
                problems.append("seq \(event.seq): \(mechanic.name) claimed by \(quote) while held by \(current)")
            }
            if retired.contains(mechanic.id) {
                problems.append("seq \(event.seq): \(mechanic.name) claimed by \(quote) after retiring")
            }
            holder[mechanic.id] = quote
        case .mechanicFree(let mechanic, let quote):
            if holder[mechanic.id] != quote {
                problems.append("seq \(event.seq): \(mechanic.name) freed by \(quote), not its holder")
            }
            holder[mechanic.id] = nil
        case .roster(let mechanic, .retired): retired.insert(mechanic.id)
        case .roster(let mechanic, .added): retired.remove(mechanic.id)
        case .quote, .quoteReassigned, .mechanicDuty, .roster, .catalogApplied: break
        }
    }
    return problems
}

extension Result {
    /// The error, when this is a failure.
    public var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Replays `events` and reports every claim of a mechanic while off duty.
public func bookingsOffDuty(in events: [StoredEvent]) -> [String] {
    var offDuty: Set<MechanicID> = []
    var problems: [String] = []
    for event in events {
        switch event.kind {
        case .mechanicDuty(let mechanic, let onDuty):
            if onDuty { offDuty.remove(mechanic.id) } else { offDuty.insert(mechanic.id) }
        case .mechanicBusy(let mechanic, let quote) where offDuty.contains(mechanic.id):
            problems.append("seq \(event.seq): \(mechanic.name) claimed by \(quote) while off duty")
        default: break
        }
    }
    return problems
}
