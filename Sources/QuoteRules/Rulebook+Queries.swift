public import QuoteCore
public import QuoteStore

extension Rulebook {
    /// Answers `request` from `store`'s committed state, against `catalog`, loading at most
    /// `maximumRows` rows whatever the request's `limit` asks, so that one request's work is
    /// bounded. A quote the actor does not reach is answered as unknown. Throws only when
    /// the store could not be read (a `ping` says so in its answer instead).
    public func answer(
        _ request: ReadRequest, catalog: Catalog, from store: any QuoteStore, maximumRows: Int
    ) async throws(StoreError) -> QueryAnswer {
        let actor = request.actor
        switch request.kind {
        case .replay(let key, let digest, let refusal):
            return .written(
                try await replay(idempotencyKey: key, digest: digest, refusal: refusal, from: store, by: actor))
        case .query(.get(let id)):
            guard let record = try await store.quote(id), actor.reaches(record.quote) else {
                return .refused(QuoteError(.unknownQuote, "no quote \(id)"))
            }
            return .quote(record)
        case .query(.list(let status, let customer, let after, let limit)):
            let rows = min(limit, maximumRows)
            let page = try await store.quotes(
                status: status, customer: customer, afterID: after, limit: rows,
                examining: QuotePage.defaultExamined)
            return .quotes(page.quotes, limit: rows, examinedThrough: page.examinedThrough)
        case .query(.mechanics(let freeOnly, let skill)):
            return .mechanics(
                try await store.mechanics().filter { state in
                    (!freeOnly || state.isFree) && (skill.map { state.mechanic.skill == $0 } ?? true)
                })
        case .query(.services):
            return .services(catalog.services)
        case .query(.catalog):
            // Alone on its store, this daemon's catalog is the store's; shared, another daemon
            // may have changed it a moment ago.
            return .catalog(store.isShared ? try await store.catalog() : catalog)
        case .query(.stats):
            return .stats(try await StoreState.read(from: store))
        case .query(.waiting(let limit)):
            let rows = min(limit, maximumRows)
            let quotes = try await store.waitingQuotes(limit: rows)
            return .waiting(quotes, truncated: rows < limit && quotes.count == rows)
        case .query(.events(let since, let limit)):
            let rows = min(limit, maximumRows)
            let events = try await store.events(after: since, limit: rows)
            return .events(
                events, lastSeq: try await store.lastSequence(), truncated: rows < limit && events.count == rows)
        case .query(.ping):
            do {
                return .pong(.success(try await store.lastSequence()))
            } catch {
                return .pong(.failure(error))
            }
        }
    }
}
