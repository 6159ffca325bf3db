import Foundation
import PostgresNIO
import QuoteStore

/// The statements that write a batch's rows, last before `COMMIT`: each column's values bound
/// as one array and turned back into rows by `unnest`, so that a statement's text is short and
/// the same whatever the batch's size, and a batch of any size is one round trip a statement.
/// One `unnest` a column, in the select list (they run in step), hands the rows on as they
/// come; one `unnest` of every array in `FROM` would first copy them all into a tuple store.
///
/// They are sent as unnamed statements, parsed each time (a short text: cheap), not as named
/// prepared ones: postgres-nio keeps a failed preparation's error for its connection's life,
/// so one lock or statement timeout while preparing, inside a transaction, would fail every
/// later batch on that connection.
enum BatchStatements {
    /// The new quotes.
    struct InsertQuotes: BatchStatement {
        static let sql = """
            INSERT INTO quotes (id, state, mechanic_id, price_cents, updated_at, data, history, wait_seq, wait_skill,
                wait_mechanic, idempotency_key, currency, submitted_at, customer_email, customer_name)
            SELECT unnest($1::bigint[]), unnest($2::text[]), unnest($3::bigint[]), unnest($4::bigint[]),
                unnest($5::bigint[]), unnest($6::bytea[]), unnest($7::bytea[]), unnest($8::bigint[]), unnest($9::int[]),
                unnest($10::bigint[]), unnest($11::text[]), unnest($12::text[]), unnest($13::bigint[]),
                unnest($14::text[]), unnest($15::text[])
            """

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

    /// The quotes changed; returns each one's id, so that a quote with no row is noticed.
    struct UpdateQuotes: BatchStatement {
        static let sql = """
            UPDATE quotes SET state = v.state, mechanic_id = v.mechanic_id, price_cents = v.price_cents,
                updated_at = v.updated_at, data = v.data, history = v.history, wait_seq = v.wait_seq,
                wait_skill = v.wait_skill, wait_mechanic = v.wait_mechanic
            FROM (
                SELECT unnest($1::bigint[]) AS id, unnest($2::text[]) AS state, unnest($3::bigint[]) AS mechanic_id,
                    unnest($4::bigint[]) AS price_cents, unnest($5::bigint[]) AS updated_at, unnest($6::bytea[]) AS data,
                    unnest($7::bytea[]) AS history, unnest($8::bigint[]) AS wait_seq, unnest($9::int[]) AS wait_skill,
                    unnest($10::bigint[]) AS wait_mechanic
            ) v
            WHERE quotes.id = v.id
            RETURNING quotes.id
            """

        var quote = QuoteColumns()

        func bind(to columns: inout BatchColumns) {
            quote.bind(to: &columns)
        }
    }

    /// What a quote's row holds that a change can alter, in the order both quote statements
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

    /// The events.
    struct InsertEvents: BatchStatement {
        static let sql = """
            INSERT INTO events (seq, at, type, quote_id, mechanic_id, from_state, to_state, data, actor)
            SELECT unnest($1::bigint[]), unnest($2::bigint[]), unnest($3::text[]), unnest($4::bigint[]),
                unnest($5::bigint[]), unnest($6::text[]), unnest($7::text[]), unnest($8::bytea[]), unnest($9::text[])
            """

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

/// A statement of fixed text and the columns it binds, in the order of its parameters.
protocol BatchStatement: Sendable {
    static var sql: String { get }
    func bind(to columns: inout BatchColumns)
}

extension BatchStatement {
    /// The statement with its values; an error if its columns are not all as long.
    var query: PostgresQuery {
        get throws(StoreError) {
            var columns = BatchColumns()
            bind(to: &columns)
            let counts = columns.counts
            guard counts.allSatisfy({ $0 == counts.first }) else {
                throw StoreError(.database, "integrity: a batch's columns have \(counts) values; they must be as many")
            }
            return PostgresQuery(unsafeSQL: Self.sql, binds: columns.bindings)
        }
    }
}

/// A statement's columns as they are bound, with each one's number of values: `unnest` pads a
/// shorter array with NULLs, so a column left short would write NULLs, not fail.
struct BatchColumns {
    private(set) var bindings = PostgresBindings(capacity: 15)
    private(set) var counts: [Int] = []

    mutating func append<Element>(_ column: ColumnValues<Element>) {
        bindings.append(column)
        counts.append(column.count)
    }
}
