import GRDB
import GRDBSQLite

/// Room for the text and blob parameters of one transaction's statements, so that SQLite
/// binds each where it lies (`SQLITE_STATIC`) instead of copying it into an allocation of
/// its own and freeing it at the next bind (`SQLITE_TRANSIENT`): a submission binds about
/// ten strings and blobs, each a `malloc` and a `free` otherwise.
///
/// SQLite reads a parameter only while its statement steps, and every run binds every
/// parameter anew (``Bindings`` checks the count before stepping), so the room is reused by
/// each statement: ``reset()`` before its parameters are bound. It never moves while a
/// statement's parameters point into it: it grows only at a reset, to what the statements
/// before asked for, up to ``maximumBytes``; a value that finds no room is bound as a copy
/// of SQLite's own. The transaction owns it, on the writer's thread, and unbinds its
/// statements (``unbind(_:)``) before it is freed.
final class ParameterArena {
    /// The most the room grows to; larger parameters are copied by SQLite.
    static let maximumBytes = 1 << 20

    private var base: UnsafeMutableRawPointer?
    private var capacity = 0
    private var used = 0
    /// The most one statement asked for since the room last grew.
    private var wanted = 0

    init() {}

    deinit { base?.deallocate() }

    /// Makes the whole room free for the next statement's parameters (the last statement's
    /// are never read again before they are bound anew), grown first if one asked for more.
    func reset() {
        if base == nil || wanted > capacity {
            base?.deallocate()
            capacity = min(max(wanted, capacity * 2, 16_384), Self.maximumBytes)
            base = .allocate(byteCount: capacity, alignment: 16)
        }
        used = 0
        wanted = 0
    }

    /// `bytes` copied into the room, valid until the next ``reset()``; `nil` when there is
    /// no room for them.
    func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
        let end = used + bytes.count
        wanted = max(wanted, end)
        guard let base, end <= capacity else { return nil }
        let start = base + used
        if let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
        used = end
        return UnsafeRawPointer(start)
    }

    /// Drops `statements`' parameters, so that none points into the room once it is freed.
    func unbind(_ statements: some Sequence<Statement>) {
        for statement in statements { sqlite3_clear_bindings(statement.sqliteStatement) }
    }
}
