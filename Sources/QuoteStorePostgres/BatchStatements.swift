import Foundation
import PostgresNIO
import QuoteStore

/// The statement that writes a batch's rows, last before `COMMIT`: each column's values bound
/// as one array and turned back into rows by `unnest`, so that its text is short and the same
/// whatever the batch's size. One `unnest` a column, in the select list (they run in step),
/// hands the rows on as they come; one `unnest` of every array in `FROM` would first copy them
/// all into a tuple store.
///
/// The new quotes, the changed ones and the events are one statement, three data-modifying
/// `WITH` queries (``Rows``): postgres-nio sends a statement only once the last one is
/// answered, and these are sent while the counters row is locked, which every daemon's commit
/// waits for: a round trip fewer (two, with changed quotes) in the section no two daemons run
/// at once. The three cannot meet: the changed quotes are rows committed before the
/// transaction, the new ones rows it inserts, and a quote is one or the other.
///
/// It is sent as an unnamed statement, parsed each time (a short text: cheap), not as a named
/// prepared one: postgres-nio keeps a failed preparation's error for its connection's life,
/// so one lock or statement timeout while preparing, inside a transaction, would fail every
/// later batch on that connection.
enum BatchStatements {
    /// Everything a batch writes; answers the id of each changed quote, so that a quote with no
    /// row is noticed.
    struct Rows: Sendable {
        static let sql = """
            WITH inserted AS (
                INSERT INTO quotes (id, state, mechanic_id, price_cents, updated_at, data, history, wait_seq, wait_skill,
                    wait_mechanic, idempotency_key, currency, submitted_at, customer_email, customer_name)
                SELECT unnest($1::bigint[]), unnest($2::text[]), unnest($3::bigint[]), unnest($4::bigint[]),
                    unnest($5::bigint[]), unnest($6::bytea[]), unnest($7::bytea[]), unnest($8::bigint[]),
                    unnest($9::int[]), unnest($10::bigint[]), unnest($11::text[]), unnest($12::text[]),
                    unnest($13::bigint[]), unnest($14::text[]), unnest($15::text[])
            ), updated AS (
                UPDATE quotes SET state = v.state, mechanic_id = v.mechanic_id, price_cents = v.price_cents,
                    updated_at = v.updated_at, data = v.data, history = v.history, wait_seq = v.wait_seq,
                    wait_skill = v.wait_skill, wait_mechanic = v.wait_mechanic
                FROM (
                    SELECT unnest($16::bigint[]) AS id, unnest($17::text[]) AS state,
                        unnest($18::bigint[]) AS mechanic_id, unnest($19::bigint[]) AS price_cents,
                        unnest($20::bigint[]) AS updated_at, unnest($21::bytea[]) AS data,
                        unnest($22::bytea[]) AS history, unnest($23::bigint[]) AS wait_seq,
                        unnest($24::int[]) AS wait_skill, unnest($25::bigint[]) AS wait_mechanic
                ) v
                WHERE quotes.id = v.id
                RETURNING quotes.id
            ), appended AS (
                INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
                SELECT unnest($26::bigint[]), unnest($27::bigint[]), unnest($28::text[]), unnest($29::bigint[]),
                    unnest($30::bigint[]), unnest($31::text[]), unnest($32::text[]), unnest($33::bytea[]),
                    unnest($34::text[])
            )
            SELECT id FROM updated
            """

        var inserted = InsertQuotes()
        var updated = UpdateQuotes()
        var events = InsertEvents()

        var isEmpty: Bool { inserted.isEmpty && updated.quote.count == 0 && events.isEmpty }

        /// The statement with its values; an error if a part's columns are not all as long.
        var query: PostgresQuery {
            get throws(StoreError) {
                var columns = BatchColumns()
                try columns.append(inserted)
                try columns.append(updated)
                try columns.append(events)
                return PostgresQuery(unsafeSQL: Self.sql, binds: columns.bindings)
            }
        }
    }

    /// The new quotes (`inserted`).
    struct InsertQuotes: BatchPart {
        var quote = QuoteColumns()
        var idempotencyKey = ColumnValues<String>()
        var currency = ColumnValues<String>()
        var submittedAt = ColumnValues<Int64>()
        var customerEmail = ColumnValues<String>()
        var customerName = ColumnValues<String>()

        var isEmpty: Bool { quote.count == 0 }

        func bind(to columns: inout BatchColumns) {
            quote.bind(to: &columns)
            columns.append(idempotencyKey)
            columns.append(currency)
            columns.append(submittedAt)
            columns.append(customerEmail)
            columns.append(customerName)
        }
    }

    /// The quotes changed (`updated`).
    struct UpdateQuotes: BatchPart {
        var quote = QuoteColumns()

        func bind(to columns: inout BatchColumns) {
            quote.bind(to: &columns)
        }
    }

    /// What a quote's row holds that a change can alter, in the order both quote parts
    /// bind it first: its id, state, mechanic, price, time of change, the encoded quote and
    /// history, and its place in the wait-list (all NULL when it does not wait: the seq that
    /// put it in line, the skill its work needs, the one mechanic it waits for).
    struct QuoteColumns: Sendable {
        var id = ColumnValues<Int64>()
        var state = ColumnValues<String>()
        var mechanic = ColumnValues<Int64>()
        var priceCents = ColumnValues<Int64>()
        var updatedAt = ColumnValues<Int64>()
        var data = ColumnValues<ByteBuffer>()
        var history = ColumnValues<ByteBuffer>()
        var waitSeq = ColumnValues<Int64>()
        var waitSkill = ColumnValues<Int32>()
        var waitMechanic = ColumnValues<Int64>()

        var count: Int { id.count }

        fileprivate func bind(to columns: inout BatchColumns) {
            columns.append(id)
            columns.append(state)
            columns.append(mechanic)
            columns.append(priceCents)
            columns.append(updatedAt)
            columns.append(data)
            columns.append(history)
            columns.append(waitSeq)
            columns.append(waitSkill)
            columns.append(waitMechanic)
        }
    }

    /// The events (`appended`).
    struct InsertEvents: BatchPart {
        var seq = ColumnValues<Int64>()
        var at = ColumnValues<Int64>()
        var type = ColumnValues<String>()
        var quote = ColumnValues<Int64>()
        var mechanic = ColumnValues<Int64>()
        var from = ColumnValues<String>()
        var to = ColumnValues<String>()
        var data = ColumnValues<ByteBuffer>()
        var actor = ColumnValues<String>()

        var isEmpty: Bool { seq.count == 0 }

        func bind(to columns: inout BatchColumns) {
            columns.append(seq)
            columns.append(at)
            columns.append(type)
            columns.append(quote)
            columns.append(mechanic)
            columns.append(from)
            columns.append(to)
            columns.append(data)
            columns.append(actor)
        }
    }
}

/// One of ``BatchStatements/Rows``'s parts: the columns it binds, in the order of their
/// parameters.
protocol BatchPart: Sendable {
    func bind(to columns: inout BatchColumns)
}

/// A statement's columns as they are bound, with the number of values of each column of the
/// part being bound: `unnest` pads a shorter array with NULLs, so a column left short would
/// write NULLs, not fail.
struct BatchColumns {
    private(set) var bindings = PostgresBindings(capacity: 34)
    private var counts: [Int] = []

    /// Binds `part`'s columns; an error if they are not all as long.
    mutating func append(_ part: some BatchPart) throws(StoreError) {
        counts.removeAll(keepingCapacity: true)
        part.bind(to: &self)
        guard counts.allSatisfy({ $0 == counts.first }) else {
            throw StoreError(.database, "integrity: a batch's columns have \(counts) values; they must be as many")
        }
    }

    mutating func append<Element>(_ column: ColumnValues<Element>) {
        bindings.append(column)
        counts.append(column.count)
    }
}
