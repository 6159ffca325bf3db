public import Foundation
public import QuoteCore

/// A command that has passed every check that needs no stored state: a submission validated
/// and priced against a catalog snapshot, a mechanic's name looked up. Only such commands
/// reach a store transaction, so that an invalid request is answered at once and never waits
/// for a commit.
public enum CheckedCommand: Sendable, Hashable {
    /// Record a validated, priced submission; with `book`, claim a mechanic at once, and with
    /// `wait` too, wait in line when no one is free.
    case submit(CheckedSubmission, idempotencyKey: String?, book: Bool, wait: Bool = false)
    /// Fill a pending quote's missing information and/or set its price. Boxed (`indirect`):
    /// the largest payload, which every command of every batch would otherwise be as large as.
    indirect case resolve(QuoteID, Resolution)
    /// Book a ready quote with `mechanic`, or by the dispatch order when `nil`; with `wait`,
    /// wait in line (for `mechanic` alone, if named) when no one able is free.
    case book(QuoteID, mechanic: Mechanic?, wait: Bool = false)
    /// Complete a booked quote, issue its receipt and free its mechanic.
    case complete(QuoteID)
    /// Cancel a quote that is not completed, freeing its mechanic if it had one.
    case cancel(QuoteID, reason: String?)
    /// Give every free mechanic the oldest waiting quote they can do (after the roster
    /// changed: a mechanic added or back takes from the wait-list).
    case serveWaitList
    /// Take `mechanic` off duty, or put them back on duty to serve the wait-list.
    case setDuty(Mechanic, onDuty: Bool)
    /// Move a booked quote to `mechanic`, or by the dispatch order when `nil`.
    case reassign(QuoteID, mechanic: Mechanic?)
    /// Add a mechanic called `name` to the roster; refused if one on it has that name.
    case addMechanic(name: String, skill: Skill)
    /// Change the skill of the mechanic named; their name is looked up in the transaction.
    case updateMechanic(mechanic: String, skill: Skill)
    /// Retire the mechanic named; their name is looked up in the transaction.
    case retireMechanic(mechanic: String)
    /// Put `catalog` in force in place of the stored one. (Boxed, as ``recheck(_:refusal:)``:
    /// a command is copied between stages, and these rare ones would make every one larger.)
    indirect case applyCatalog(Catalog)
    /// A command the batch's catalog refused (`refusal`) for a name it does not know: checked
    /// again in the transaction if the store's catalog is newer (another daemon changed it
    /// since the batch began), refused with `refusal` otherwise.
    indirect case recheck(QuoteCommand, refusal: QuoteError)
}

extension CheckedCommand {
    /// Whether the command changes the catalog (the roster or the whole of it).
    public var changesCatalog: Bool {
        switch self {
        case .addMechanic, .updateMechanic, .retireMechanic, .applyCatalog: true
        default: false
        }
    }

    /// Whether the command may put a quote in the wait-list: a booking that may wait, a
    /// reassignment to whoever is free (to the front of the line when no one is), or a command
    /// checked again in the transaction.
    public var mayPutInLine: Bool {
        switch self {
        case .submit(_, _, let book, let wait): book && wait
        case .book(_, _, let wait): wait
        case .reassign(_, let mechanic): mechanic == nil
        case .recheck: true
        default: false
        }
    }

    /// Whether the command may free a mechanic, or make one able or available, who then
    /// serves the wait-list: all but submissions, bookings and resolutions.
    public var mayServeLine: Bool {
        switch self {
        case .submit, .book, .resolve: false
        default: true
        }
    }
}

/// A submission turned into a valid request and the stage it is priced to.
///
/// Held as a priced `Quote` without an id yet: one reference, so that a batch's commands are
/// copied and moved between stages without copying each request's strings and arrays.
public struct CheckedSubmission: Sendable, Hashable {
    /// The quote as it will be stored, but for its id and times, which the store assigns.
    private let template: Quote

    /// The validated request.
    public var request: QuoteRequest { template.request }
    /// `ready` with its price, or `pending` with what support must resolve.
    public var stage: QuoteStage { template.stage }
    /// The fingerprint of the submission as sent, kept with the quote for retries under an
    /// idempotency key; `nil` when none was computed (no key).
    public let digest: SubmissionDigest?
    /// The version of the catalog it was checked against.
    public let catalogVersion: Int64

    /// Validates `submission` against `catalog` at `now` and prices it in the catalog's
    /// currency; throws with every problem at once.
    public init(
        _ submission: borrowing Submission, in catalog: Catalog, at now: Date, digest: SubmissionDigest? = nil
    ) throws(QuoteError) {
        self.digest = digest
        catalogVersion = catalog.version
        let request = try QuoteBuilder.build(submission, in: catalog, at: now)
        template = Quote(
            id: QuoteID(0), request: request, stage: try .priced(request, currency: catalog.currency), submittedAt: now,
            updatedAt: now)
    }
}

extension CheckedSubmission {
    /// The same submission checked and priced against `catalog` at `now`, another version
    /// than it was checked against.
    public func rechecked(in catalog: Catalog, at now: Date) throws(QuoteError) -> CheckedSubmission {
        try CheckedSubmission(Submission(request), in: catalog, at: now, digest: digest)
    }
}

/// A checked command and who it is applied for: what a store transaction takes.
public struct CheckedRequest: Sendable, Hashable {
    /// What to do.
    public var command: CheckedCommand
    /// Who asks: recorded in the audit trail, and limiting the quotes reached.
    public var actor: Actor

    /// The request of `actor` to apply `command`.
    public init(_ command: CheckedCommand, by actor: Actor) {
        self.command = command
        self.actor = actor
    }
}
