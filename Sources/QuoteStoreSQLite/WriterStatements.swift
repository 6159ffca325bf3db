import GRDB

/// The write transactions' prepared statements, kept from one transaction to the next, so
/// that no transaction looks a statement up in GRDB's cache again: each look-up hashes the
/// statement's whole SQL text, a cost a batch of one request would pay in full.
///
/// The store keeps one for its writer connection, the only one that runs them, and lends it
/// to one write transaction at a time: they are serialized on that connection, which is all
/// that makes it `Sendable`. A statement outlives a change of schema (SQLite prepares it
/// again when it next steps) and is finalized when the store is gone, after its connection
/// is closed (`sqlite3_close_v2` waits for it).
final class WriterStatements: @unchecked Sendable {
    /// The statement in each slot, once prepared; the slots are the transaction's queries.
    /// Only read and set by one transaction at a time, on the writer's thread.
    @exclusivity(unchecked) private var slots: [Statement?]
    /// The connection they were prepared on: given another, they are prepared anew for it.
    @exclusivity(unchecked) private var connection: ObjectIdentifier?

    /// Room for `count` statements, none prepared yet.
    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    /// The statement in `slot`, prepared from `sql` on `db` the first time.
    func statement(_ slot: Int, on db: Database, _ sql: () -> String) throws -> Statement {
        if connection != ObjectIdentifier(db) {
            slots = Array(repeating: nil, count: slots.count)
            connection = ObjectIdentifier(db)
        }
        if let statement = slots[slot] { return statement }
        let statement = try db.cachedStatement(sql: sql())
        slots[slot] = statement
        return statement
    }
}
