/// A failure of the store itself (not a refused command): the database could not be opened,
/// migrated, read or committed. The batch it concerned was not applied, unless
/// ``outcomeUnknown`` says that it may have been.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure. New kinds may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case open, migration, database, corrupt, busy, configuration, unavailable
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The store could not be opened (path, permissions, lock).
        public static let open = Code(.open)
        /// The schema could not be brought up to date.
        public static let migration = Code(.migration)
        /// A statement or commit failed.
        public static let database = Code(.database)
        /// Stored data could not be read back.
        public static let corrupt = Code(.corrupt)
        /// Another writer held the lock past the busy timeout, or (PostgreSQL) a deadlock or a
        /// serialization conflict rolled the transaction back: nothing was applied; retry.
        public static let busy = Code(.busy)
        /// A setting of the store is invalid; the message names its key.
        public static let configuration = Code(.configuration)
        /// The database server could not be reached (down, restarting, unreachable): nothing
        /// was applied, and the store reconnects by itself.
        public static let unavailable = Code(.unavailable)

        public var description: String { base.rawValue }
    }

    /// What failed.
    public let code: Code
    /// Details, including the underlying database error.
    public let message: String
    /// Whether it failed while committing, so that the batch may have been applied after all:
    /// a connection lost during `COMMIT`, a commit no synchronous standby confirmed, a disk
    /// that failed as the commit was written. Never acknowledged; not to be sent again blindly.
    public let outcomeUnknown: Bool

    /// Creates an error.
    public init(_ code: Code, _ message: String, outcomeUnknown: Bool = false) {
        self.code = code
        self.message = message
        self.outcomeUnknown = outcomeUnknown
    }

    /// The same failure, met while committing: its batch may have been applied.
    public var withUnknownOutcome: StoreError {
        StoreError(code, message, outcomeUnknown: true)
    }

    public var description: String { "store \(code) error: \(message)" }
}
