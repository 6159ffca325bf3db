public import QuoteCore
public import QuoteStore

extension Rulebook {
    /// Repairs what `QuoteStore/integrityViolations()` reported, in one transaction of
    /// `store`, logging each change as events; only on an operator's explicit command.
    ///
    /// A mechanic held by a quote that is not booked with them is freed first; then a booked
    /// quote whose mechanic is free claims them back. Each step is conditional, so a
    /// violation repaired meanwhile is left alone. Returns the violations that were repaired.
    public func repair(
        _ violations: [IntegrityViolation], catalog: Catalog, in store: any QuoteStore
    ) async throws(StoreError) -> [IntegrityViolation] {
        guard !violations.isEmpty else { return [] }
        return try await store.write { transaction throws(StoreError) in
            var repaired: [IntegrityViolation] = []
            var claims: [(IntegrityViolation, Quote, MechanicID)] = []
            for violation in violations {
                guard let quoteID = violation.quote, let mechanicID = violation.mechanic else { continue }
                let quote = try await transaction.quote(quoteID)
                if let quote, quote.status == .booked, quote.mechanic?.id == mechanicID {
                    claims.append((violation, quote, mechanicID))
                } else if try await transaction.release(mechanicID, from: quoteID) {
                    _ = try await transaction.append(
                        [
                            .mechanicFree(Self.mechanic(mechanicID, in: catalog), quote: quoteID)
                        ], by: Actor.daemon.name)
                    repaired.append(violation)
                }
            }
            for (violation, quote, mechanicID) in claims
            where try await Self.reclaim(mechanicID, for: quote.id, in: transaction) {
                _ = try await transaction.append(
                    [
                        .mechanicBusy(quote.mechanic ?? Self.mechanic(mechanicID, in: catalog), quote: quote.id)
                    ], by: Actor.daemon.name)
                repaired.append(violation)
            }
            return repaired
        }.value
    }

    /// Claims `mechanic` back for the booked `quote`, whether or not they are on duty (off
    /// duty, they keep the work in hand): put on duty for the claim, and back off after it,
    /// within the transaction, so their duty does not change.
    private static func reclaim(
        _ mechanic: MechanicID, for quote: QuoteID, in transaction: any StoreTransaction
    ) async throws(StoreError) -> Bool {
        let wasOff = try await transaction.setDuty(mechanic, onDuty: true)
        let claimed = try await transaction.claim(mechanic, minimumSkill: .junior, for: quote)
        if wasOff { _ = try await transaction.setDuty(mechanic, onDuty: false) }
        return claimed
    }

    private static func mechanic(_ id: MechanicID, in catalog: Catalog) -> Mechanic {
        catalog.mechanic(id: id) ?? Mechanic(id: id, name: "#\(id)", skill: .junior)
    }
}
