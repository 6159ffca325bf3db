import Foundation
import GRDB
import GRDBSQLite

/// Values bound straight to a prepared statement's SQLite handle, in parameter order.
///
/// GRDB's `execute(arguments:)` boxes each value in an existential array and binds it through
/// nested closures; on the submission path that was a fifth of the store's instructions
/// (callgrind, `quoted-bench store`). Strings and blobs are copied by SQLite
/// (`SQLITE_TRANSIENT`), so nothing has to outlive the call.
struct Bindings {
    private let handle: OpaquePointer
    private(set) var count: Int32 = 0

    fileprivate init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    mutating func bind(_ value: Int64) {
        count += 1
        sqlite3_bind_int64(handle, count, value)
    }

    mutating func bind(_ value: Int64?) {
        guard let value else { return bindNull() }
        bind(value)
    }

    mutating func bind(_ value: String) {
        count += 1
        var value = value
        value.withUTF8 { utf8 in
            _ = sqlite3_bind_text(
                handle, count, UnsafeRawPointer(utf8.baseAddress).map { $0.assumingMemoryBound(to: CChar.self) },
                Int32(utf8.count), Self.transient)
        }
    }

    mutating func bind(_ value: String?) {
        guard let value else { return bindNull() }
        bind(value)
    }

    mutating func bind(_ value: Data) {
        count += 1
        value.withUnsafeBytes { bytes in
            // A zero-length blob still needs a non-NULL pointer, or SQLite stores NULL.
            _ = sqlite3_bind_blob(
                handle, count, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
        }
    }

    mutating func bindNull() {
        count += 1
        sqlite3_bind_null(handle, count)
    }

    /// SQLite's "copy it now" destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

extension Statement {
    /// Binds the statement's parameters with `body`, then executes it through GRDB (so its
    /// transaction bookkeeping still sees the statement).
    func execute(binding body: (inout Bindings) -> Void) throws {
        bind(body)
        try execute()
    }

    /// Binds the statement's parameters with `body` and fetches the first column of the first
    /// row as data, if any.
    func fetchData(binding body: (inout Bindings) -> Void) throws -> Data? {
        bind(body)
        return try Data.fetchOne(self)
    }

    /// Binds the statement's parameters with `body` and fetches the first two columns of the
    /// first row as data, if any. Read through a cursor: `Row.fetchOne` copies the row and
    /// builds its column names first.
    func fetchTwoData(binding body: (inout Bindings) -> Void) throws -> (Data, Data)? {
        bind(body)
        let cursor = try Row.fetchCursor(self)
        // The row reads the statement in place: it is valid only while the cursor lives.
        return try withExtendedLifetime(cursor) {
            guard let row = try cursor.next() else { return nil }
            return (row[0], (row[1] as Data?) ?? Data())
        }
    }

    private func bind(_ body: (inout Bindings) -> Void) {
        // Clear any error left by a failed last step first: GRDB resets again below, and
        // treats a failing reset there as a programming error.
        sqlite3_reset(sqliteStatement)
        setUncheckedArguments(StatementArguments())
        var bindings = Bindings(sqliteStatement)
        body(&bindings)
        precondition(bindings.count == sqlite3_bind_parameter_count(sqliteStatement), "\(sql): wrong parameter count")
    }
}
