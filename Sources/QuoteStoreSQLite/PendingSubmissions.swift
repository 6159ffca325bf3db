import QuoteCore
import QuoteStore

/// New quotes' rows, each with the event row that stands for its first two events, held by
/// a write transaction until it next runs a statement (or commits), then written several
/// rows to a statement.
///
/// A statement's cursors stay open from one of its rows to the next: a row that goes at the
/// end of an index (ids, sequence numbers and keys that grow) is put there without a seek
/// from the root, and the statement's setup and teardown are paid once for all its rows
/// (`docs/benchmarks.md` has what that saves).
///
/// A row with an idempotency key is held too (``SQLiteTransaction/holdsKeyed``): its key is
/// checked by the unique index when it is written, and a transaction that finds one taken
/// is run again, writing each keyed row at once.
///
/// Held rows are only ever ahead of the file, never beside it: ``SQLiteTransaction`` writes
/// them before any other statement, so every read, update and constraint sees them, and
/// before any `SAVEPOINT`, so that a rollback drops exactly the rows held since its
/// savepoint began.
struct PendingSubmissions {
    /// One new quote: its row in `quotes` and its row in `events`.
    struct Row {
        var id: Int64
        var status: QuoteStatus
        var idempotencyKey: String?
        var mechanic: Int64?
        var priceCents: Int64?
        var currency: String
        var submittedAt: Int64
        var updatedAt: Int64
        /// The quote in `QuoteCodec`'s form: the same bytes in both rows.
        var data: [UInt8]
        var history: [UInt8]
        var customerEmail: String?
        var customerName: String?
        /// The event row's number: the priced state's, one after `quote.submitted`'s.
        var eventSeq: Int64
        var eventAt: Int64
        var actor: String?
    }

    /// The rows held, in the order they were inserted.
    private(set) var rows: [Row] = []

    var isEmpty: Bool { rows.isEmpty }
    /// How many rows were ever held, written since or not.
    private(set) var held = 0

    /// Makes room for `count` rows before the rows grow.
    mutating func reserveCapacity(_ count: Int) {
        if count > 0 { rows.reserveCapacity(count) }
    }

    mutating func append(_ row: consuming Row) {
        held &+= 1
        rows.append(row)
    }

    /// Drops every row held, keeping their room: they were written, or rolled back.
    mutating func removeAll() {
        rows.removeAll(keepingCapacity: true)
    }

    /// How many rows the statement that writes the next of `remaining` rows takes: the
    /// largest of a few fixed sizes that fits, so that each size is one prepared statement.
    static func chunk(_ remaining: Int) -> Int {
        chunkSizes.first { $0 <= remaining } ?? 1
    }

    /// The sizes of the statements rows are written with, largest first, ending with one.
    static let chunkSizes = [16, 4, 1]

    /// How a statement of `count` rows meets a failed constraint. One of several rows
    /// rolls the whole transaction back (`OR ROLLBACK`), which fails anyway: so SQLite
    /// keeps no statement journal to undo the rows before it, a temporary file written on
    /// every statement. One alone fails by itself, as a key found taken must.
    private static func conflict(_ count: Int) -> String {
        count > 1 ? "OR ROLLBACK " : ""
    }

    /// The `INSERT` of `count` quote rows.
    static func quotesSQL(rows count: Int) -> String {
        """
        INSERT \(conflict(count))INTO quotes (id, state, idempotency_key, mechanic_id, price_cents, currency, submitted_at,
            updated_at, data, history, customer_email, customer_name)
        VALUES \(repeatElement("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: count).joined(separator: ", "))
        """
    }

    /// The `INSERT` of `count` event rows, each a new quote's priced state standing for its
    /// `quote.submitted` (`StoredEventRow`).
    static func eventsSQL(rows count: Int) -> String {
        """
        INSERT \(conflict(count))INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
        VALUES \(repeatElement("(?, ?, ?, ?, NULL, 'submitted', ?, ?, ?)", count: count).joined(separator: ", "))
        """
    }

    /// Binds `row`'s quote row, in the order of ``quotesSQL(rows:)``'s columns.
    static func bindQuote(_ row: UnsafePointer<Row>, to bindings: inout Bindings) {
        bindings.bind(row.pointee.id)
        bindings.bind(row.pointee.status.rawValue)
        bindings.bind(row.pointee.idempotencyKey)
        bindings.bind(row.pointee.mechanic)
        bindings.bind(row.pointee.priceCents)
        bindings.bind(row.pointee.currency)
        bindings.bind(row.pointee.submittedAt)
        bindings.bind(row.pointee.updatedAt)
        bindings.bind(row.pointee.data)
        bindings.bind(row.pointee.history)
        bindings.bind(row.pointee.customerEmail)
        bindings.bind(row.pointee.customerName)
    }

    /// Binds `row`'s event row, in the order of ``eventsSQL(rows:)``'s parameters.
    static func bindEvent(_ row: UnsafePointer<Row>, to bindings: inout Bindings) {
        bindings.bind(row.pointee.eventSeq)
        bindings.bind(row.pointee.eventAt)
        bindings.bind(row.pointee.status.eventType)
        bindings.bind(row.pointee.id)
        bindings.bind(row.pointee.status.rawValue)
        bindings.bind(row.pointee.data)
        bindings.bind(row.pointee.actor)
    }
}

extension QuoteStatus {
    /// The type of the event that puts a quote in this state.
    fileprivate var eventType: String {
        switch self {
        case .ready: "quote.ready"
        case .pending: "quote.pending"
        default: "quote.\(rawValue)"
        }
    }
}
