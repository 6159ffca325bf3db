/// A change a client asks for, as it arrives: the vocabulary shared by the wire protocol,
/// which decodes it, and the rules, which check and apply it.
///
/// A command says what is wanted, not whether it may be had: ``QuoteCommand/submit(_:idempotencyKey:book:wait:)``
/// carries the submission as sent, checked against the catalog only when the rules take it.
public enum QuoteCommand: Sendable, Hashable {
    /// Record a submission, price it, and with `book` claim a mechanic at once; with `wait`
    /// too, a quote that finds no one free waits in line instead. The same `idempotencyKey`
    /// again returns the original quote and creates nothing.
    case submit(Submission, idempotencyKey: String?, book: Bool, wait: Bool = false)
    /// Fill a pending quote's missing information and/or set its price.
    case resolve(QuoteID, Resolution)
    /// Book a ready quote: with `mechanic` (a name), that one or an error; without, the
    /// dispatch order's choice, preferring the customer's mechanic. With `wait`, a quote that
    /// finds no one free (or its named mechanic busy) waits in line instead of being refused.
    case book(QuoteID, mechanic: String?, wait: Bool = false)
    /// Complete a booked quote, issue its receipt and free its mechanic.
    case complete(QuoteID)
    /// Cancel a quote that is not completed, freeing its mechanic if it had one.
    case cancel(QuoteID, reason: String?)
    /// Take the mechanic named off duty (no new booking; current work goes on) or put them
    /// back on duty (serving the wait-list at once).
    case setDuty(mechanic: String, onDuty: Bool)
    /// Move a booked quote to the mechanic named, or without a name to the next free able
    /// one by the dispatch order, or when none is free to the front of the wait-list; its
    /// mechanic is freed and serves the line.
    case reassign(QuoteID, mechanic: String?)
    /// Add a mechanic to the roster, on duty and free, under a new id.
    case addMechanic(name: String, skill: Skill)
    /// Change the skill of the mechanic named.
    case updateMechanic(mechanic: String, skill: Skill)
    /// Take the mechanic named off the roster for good: never booked again; their history,
    /// and the quote they are booked on, stay theirs.
    case retireMechanic(mechanic: String)
    /// Put `catalog` in force in place of the stored one, as one change.
    indirect case applyCatalog(Catalog)
}
