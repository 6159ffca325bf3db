import Foundation
import GRDB
import GRDBSQLite
import QuoteCore
import QuoteStore

/// Values bound straight to a prepared statement's SQLite handle, in parameter order.
///
/// GRDB's `execute(arguments:)` boxes each value in an existential array and binds it through
/// nested closures, which on the submission path costs more than the SQL. Strings and blobs
/// are copied into the room the store's ``ParameterArena`` lends the statement and bound
/// where they lie there (`SQLITE_STATIC`); one that finds no room is copied by SQLite
/// (`SQLITE_TRANSIENT`).
struct Bindings {
    private let handle: OpaquePointer
    /// The room lent for the statement's text and blobs; `nil` when none was.
    private let room: UnsafeMutableRawBufferPointer?
    private var used = 0
    private(set) var count: Int32 = 0

    fileprivate init(_ handle: OpaquePointer, room: UnsafeMutableRawBufferPointer?) {
        self.handle = handle
        self.room = room
    }

    /// `bytes` copied into the room, where they stay until the room is lent again; `nil`
    /// when there is no room for them.
    private mutating func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        let end = used + bytes.count
        guard let base = room?.baseAddress, let capacity = room?.count, end <= capacity else { return nil }
        let start = base + used
        if let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
        used = end
        return UnsafeRawPointer(start)
    }

    /// Where `bytes` are bound from, with SQLite's destructor for that place: the room
    /// (`SQLITE_STATIC`) when they fit, else the caller's buffer, copied by SQLite. Never
    /// NULL, which would bind NULL: an empty value without a buffer points at a byte of its own.
    private mutating func source(_ bytes: UnsafeRawBufferPointer) -> (UnsafeRawPointer, sqlite3_destructor_type?) {
        if let copied = copy(bytes) { return (copied, Self.static) }
        return (bytes.baseAddress ?? UnsafeRawPointer(Self.emptyValue), Self.transient)
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
        value.withUTF8Bytes { utf8 in
            let (text, destructor) = source(UnsafeRawBufferPointer(utf8))
            _ = sqlite3_bind_text(
                handle, count, text.assumingMemoryBound(to: CChar.self), Int32(utf8.count), destructor)
        }
    }

    mutating func bind(_ value: String?) {
        guard let value else { return bindNull() }
        bind(value)
    }

    mutating func bind(_ value: Data) {
        value.withUnsafeBytes { bindBlob($0) }
    }

    mutating func bind(_ value: [UInt8]) {
        value.withUnsafeBytes { bindBlob($0) }
    }

    private mutating func bindBlob(_ bytes: UnsafeRawBufferPointer) {
        count += 1
        let (blob, destructor) = source(bytes)
        _ = sqlite3_bind_blob(handle, count, blob, Int32(bytes.count), destructor)
    }

    mutating func bindNull() {
        count += 1
        sqlite3_bind_null(handle, count)
    }

    /// The byte an empty value bound as a copy points at: SQLite copies none of it.
    nonisolated(unsafe) private static let emptyValue: UnsafeMutableRawPointer = {
        let byte = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        byte.storeBytes(of: 0, as: UInt8.self)
        return byte
    }()

    /// SQLite's "copy it now" destructor.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    /// SQLite's "it stays where it is until bound anew" destructor: the null pointer, so
    /// only ever an optional (a non-optional function value must not be null).
    private static let `static`: sqlite3_destructor_type? = nil
}

/// The current row of a statement being stepped, read by column index.
struct Columns {
    fileprivate let handle: OpaquePointer

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    func string(_ index: Int32) -> String {
        guard let text = sqlite3_column_text(handle, index) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, index))), as: UTF8.self)
    }

    /// A blob's bytes, copied (a NULL or empty blob reads as empty).
    func data(_ index: Int32) -> Data {
        guard let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, index)))
    }

    /// A blob's bytes, copied into an array (a NULL or empty blob reads as empty): one
    /// allocation, where `Data` makes two.
    func bytes(_ index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
    }
}

extension Statement {
    /// Binds the statement's parameters with `body`, then steps it to its end.
    ///
    /// The hot statements of a write batch are stepped here, on SQLite's handle, rather than
    /// through GRDB's `execute()`: GRDB's per-execution bookkeeping (its scheduling check,
    /// argument validation, reset and observation hooks) costs more than binding the values.
    /// They only ever run inside a
    /// transaction GRDB opened and commits, and GRDB registers no observers on this store,
    /// so nothing it tracks is skipped; the change counters it exposes are SQLite's own.
    func execute(in arena: ParameterArena, binding body: (inout Bindings) -> Void) throws {
        _ = try step(in: arena, binding: body) { _ in () }
    }

    /// Binds the statement's parameters with `body`, steps it to its end (so that a write with
    /// `RETURNING` completes) and returns what `read` makes of its first row, if any.
    func fetchFirst<T>(
        in arena: ParameterArena, binding body: (inout Bindings) -> Void, _ read: (Columns) -> T
    ) throws -> T? {
        try step(in: arena, binding: body, read)
    }

    private func step<T>(
        in arena: ParameterArena, binding body: (inout Bindings) -> Void, _ read: (Columns) -> T
    ) throws -> T? {
        let handle = sqliteStatement
        sqlite3_reset(handle)
        // Lent until the statement is reset (the later `defer` runs first), so that nothing
        // run meanwhile, even from `read`, can write over its parameters.
        let room = arena.begin()
        defer { if room != nil { arena.end() } }
        var bindings = Bindings(handle, room: room)
        body(&bindings)
        guard bindings.count == sqlite3_bind_parameter_count(handle) else {
            throw StoreError(.database, "\(sql): wrong parameter count")
        }
        defer { sqlite3_reset(handle) }
        var first: T?
        while true {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_ROW:
                if first == nil { first = read(Columns(handle: handle)) }
            case SQLITE_DONE:
                return first
            default:
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code),
                    message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))), sql: sql)
            }
        }
    }
}
