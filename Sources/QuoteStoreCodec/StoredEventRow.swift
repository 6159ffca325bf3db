package import Foundation
package import QuoteCore
package import QuoteStore

/// An event's row as both stores keep it in their `events` table, and the one rule they share
/// for a new quote's first event.
///
/// A new quote's `quote.submitted` is written without data: its quote is the priced one in
/// the event right after it (the same quote, appended with it), back at its first state.
/// Reading the log rebuilds it from that row, which saves encoding and storing the quote twice.
/// Pruning never takes one row of the pair without the other: it deletes rows up to a `seq`
/// and older than a time, and the two share their time.
package struct StoredEventRow: Sendable {
    package var seq: Int64
    /// Milliseconds since the epoch (`StoredTime`).
    package var at: Int64
    /// The database's discriminator (`StoredEvent.type`).
    package var type: String
    package var quote: Int64
    package var from: String?
    package var data: Data
    package var by: String?

    package init(seq: Int64, at: Int64, type: String, quote: Int64, from: String?, data: Data, by: String?) {
        self.seq = seq
        self.at = at
        self.type = type
        self.quote = quote
        self.from = from
        self.data = data
        self.by = by
    }

    /// A new quote's `quote.submitted`, stored without its quote: reading it takes the row
    /// after it.
    package var isBareSubmission: Bool { type == "quote.submitted" && data.isEmpty }

    /// The new quote whose two first events `changes` are (`quote.submitted`, then its priced
    /// state), appended together: the pair whose first is stored without data.
    package static func submission(_ changes: [StoredEvent.Kind]) -> Quote? {
        guard changes.count == 2, case .quote(nil, let submitted) = changes[0],
            case .quote(.submitted, let priced) = changes[1], submitted.id == priced.id
        else { return nil }
        return submitted
    }

    /// How many rows a store reads for a page of `limit` events: one more, in the same
    /// statement, so that a page ending on a bare submission has the row it is read from.
    package static func rowsToRead(forPage limit: Int) -> Int { limit < .max ? limit + 1 : limit }

    /// The page of at most `limit` events in `rows`, read as ``rowsToRead(forPage:)`` says.
    package static func page(_ rows: [StoredEventRow], limit: Int) throws -> [StoredEvent] {
        guard rows.count > limit else { return try events(rows, following: nil) }
        return try events(Array(rows.prefix(max(limit, 0))), following: rows[max(limit, 0)])
    }

    /// The events of `rows`, consecutive in the log; `following` is the row after the last,
    /// read when the last is a bare submission (``isBareSubmission``). Throws
    /// `QuoteCodec.CorruptRecord` (or a decoding error) for a row that does not read back.
    package static func events(_ rows: [StoredEventRow], following: StoredEventRow?) throws -> [StoredEvent] {
        try rows.indices.map { index in
            try rows[index].event(next: index + 1 < rows.count ? rows[index + 1] : following)
        }
    }

    /// The event this row holds; `next` is the row after it.
    private func event(next: StoredEventRow?) throws -> StoredEvent {
        let quoteID = QuoteID(quote)
        let kind: StoredEvent.Kind
        if isBareSubmission {
            guard let next, next.seq == seq &+ 1, next.quote == quote, !next.data.isEmpty else {
                throw QuoteCodec.CorruptRecord(
                    description: "event \(seq) (quote.submitted) has no priced event after it")
            }
            let priced = try QuoteCodec.decodeQuote(next.data)
            kind = .quote(
                from: nil,
                quote: Quote(
                    id: priced.id, request: priced.request, submittedAt: priced.submittedAt,
                    submittedBy: priced.submittedBy, submissionDigest: priced.submissionDigest))
        } else {
            do {
                kind = try StoredEvent.Kind(type: type, from: from, data: data, quote: quoteID)
            } catch {
                throw QuoteCodec.CorruptRecord(description: "event \(seq): \(error)")
            }
        }
        return StoredEvent(seq: seq, at: StoredTime.date(at), kind: kind, by: by)
    }
}
