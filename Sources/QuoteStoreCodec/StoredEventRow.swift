package import Foundation
package import QuoteCore
package import QuoteStore

/// An event's row as both stores keep it in their `events` table, and the one rule they share
/// for a new quote's first event.
///
/// A new quote's `quote.submitted` is the quote of the event right after it (its priced
/// state, appended with it, the only event that leaves `submitted`), back at its first state:
/// reading the log rebuilds it from that row, which saves encoding and storing the quote twice.
/// It is kept in one of two ways, and readers take both:
/// - no row of its own (both stores now): the priced row stands for both events, its `seq`
///   and the one before, which saves a row a submission;
/// - a bare row, without data (what both wrote before, SQLite's v10 and PostgreSQL's v8),
///   read from the row after it.
///
/// (Files older still hold a `quote.submitted` with its own data, read as any other event.)
///
/// Pruning never deletes a `quote.submitted` row without the row after it.
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

    /// A new quote's `quote.submitted` kept as a bare row: its event is read from the row
    /// after it (``opensQuote``).
    package var isBareSubmission: Bool { type == "quote.submitted" && data.isEmpty }

    /// Whether this row is a new quote's priced state: it also stands for the
    /// `quote.submitted` event one `seq` before it.
    package var opensQuote: Bool { from == QuoteStatus.submitted.rawValue }

    /// The new quote whose two first events `changes` are (`quote.submitted`, then its priced
    /// state), appended together: the pair whose first has no data of its own.
    package static func submission(_ changes: [StoredEvent.Kind]) -> Quote? {
        guard changes.count == 2, case .quote(nil, let submitted) = changes[0],
            case .quote(.submitted, let priced) = changes[1], submitted.id == priced.id
        else { return nil }
        return submitted
    }

    /// SQL, over the rows `picked` (`seq`, `type`) that a prune would delete, oldest first:
    /// true but for a last one that is a `quote.submitted` row of its own, which goes with the
    /// row after it, in a later prune.
    package static let keepsPairSQL = "NOT (type = 'quote.submitted' AND seq = (SELECT max(seq) FROM picked))"

    /// SQL, for a row `e` of `events`: whether it holds two events (``opensQuote``, with no
    /// `quote.submitted` row before it), for pruning to count events rather than rows.
    package static let holdsTwoSQL =
        "e.from_state = 'submitted' AND NOT EXISTS (SELECT 1 FROM events p WHERE p.seq = e.seq - 1)"

    /// How many rows a store reads for a page of `limit` events: one more, in the same
    /// statement, so that a page ending on a bare submission has the row it is read from.
    package static func rowsToRead(forPage limit: Int) -> Int { limit < .max ? limit + 1 : limit }

    /// The page of at most `limit` events after `after` in `rows`, the rows from `after` on
    /// read as ``rowsToRead(forPage:)`` says. Throws `QuoteCodec.CorruptRecord` (or a decoding
    /// error) for a row that does not read back, or a bare submission not followed by its quote.
    package static func page(_ rows: [StoredEventRow], after: Int64, limit: Int) throws -> [StoredEvent] {
        var events: [StoredEvent] = []
        events.reserveCapacity(min(max(limit, 0), rows.count + 1))
        for index in rows.indices where events.count < limit {
            let row = rows[index]
            if row.isBareSubmission {
                // Read from the row after it. The last row of a full read may be without it (the
                // page then ends before it); at the end of the log it is missing.
                if index + 1 == rows.count && rows.count == rowsToRead(forPage: limit) { break }
                let next = index + 1 < rows.count ? rows[index + 1] : nil
                guard let next, next.seq == row.seq &+ 1, next.quote == row.quote, next.opensQuote, !next.data.isEmpty
                else {
                    throw QuoteCodec.CorruptRecord(
                        description: "event \(row.seq) (quote.submitted) has no priced event after it")
                }
                continue
            }
            // Files from before bare rows hold a `quote.submitted` with its data: read as it is.
            let ownRow = index > 0 && rows[index - 1].seq == row.seq &- 1 && !rows[index - 1].isBareSubmission
            guard row.opensQuote, row.seq &- 1 > after, !ownRow else {
                events.append(try row.event(decoded: nil))
                continue
            }
            // Its quote decoded once, for both events.
            let priced = try QuoteCodec.decodeQuote(row.data)
            events.append(row.submittedEvent(priced))
            if events.count == limit { break }
            events.append(try row.event(decoded: priced))
        }
        return events
    }

    /// The `quote.submitted` this row (``opensQuote``) stands for, one `seq` before it, from
    /// the row's quote, `priced`.
    private func submittedEvent(_ priced: Quote) -> StoredEvent {
        let submitted = Quote(
            id: priced.id, request: priced.request, submittedAt: priced.submittedAt,
            submittedBy: priced.submittedBy, submissionDigest: priced.submissionDigest)
        return StoredEvent(seq: seq &- 1, at: StoredTime.date(at), kind: .quote(from: nil, quote: submitted), by: by)
    }

    /// The event this row holds; `decoded` is its data's quote, when decoded already.
    private func event(decoded: Quote?) throws -> StoredEvent {
        let kind: StoredEvent.Kind
        do {
            kind = try StoredEvent.Kind(type: type, from: from, data: data, quote: QuoteID(quote), decoded: decoded)
        } catch {
            throw QuoteCodec.CorruptRecord(description: "event \(seq): \(error)")
        }
        return StoredEvent(seq: seq, at: StoredTime.date(at), kind: kind, by: by)
    }
}
