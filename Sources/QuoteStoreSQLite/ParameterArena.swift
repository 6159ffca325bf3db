/// Room for the text and blob parameters of the write transactions' statements, so that
/// SQLite binds each where it lies (`SQLITE_STATIC`) instead of copying it into an
/// allocation of its own and freeing it at the next bind (`SQLITE_TRANSIENT`): a submission
/// binds about ten strings and blobs, each a `malloc` and a `free` otherwise.
///
/// SQLite reads a parameter only while its statement steps, and every run binds every
/// parameter anew (``Bindings`` checks the count before stepping), so the whole room is
/// lent to each statement in turn, from ``begin()`` to ``end()``. What a statement bound
/// stays behind it, unread, until it is bound anew. The room is made once, at
/// ``bytes``, and never moves or grows, so no statement ever points at memory that is
/// gone; a statement's values beyond it, or those of a statement begun while another is
/// being run, are bound as copies of SQLite's own.
///
/// The store keeps one, for as long as its connections, and lends it to one write
/// transaction at a time: they are serialized on the writer's connection, which is all
/// that makes it `Sendable`.
final class ParameterArena: @unchecked Sendable {
    /// The room's size: a quote's row (at most a few tens of kilobytes, by the request
    /// limits; usually one or two) fits many times over, and the sixteen rows of one
    /// statement (``PendingSubmissions``) mostly do; values past it are bound as copies.
    static let bytes = 65_536

    private let room: UnsafeMutableRawBufferPointer
    /// Whether the room is lent to a statement, between `begin` and `end`. Only ever read
    /// and set inside these two calls, which call nothing out: no access can overlap another.
    @exclusivity(unchecked) private var lent = false

    init() {
        room = .allocate(byteCount: Self.bytes, alignment: 16)
    }

    deinit { room.deallocate() }

    /// The whole room, lent to the statement about to be bound; `nil` while it is lent to
    /// another, whose parameters must stay where they are.
    func begin() -> UnsafeMutableRawBufferPointer? {
        guard !lent else { return nil }
        lent = true
        return room
    }

    /// The statement begun is done with: it may be bound again only after another
    /// ``begin()``.
    func end() {
        lent = false
    }
}
