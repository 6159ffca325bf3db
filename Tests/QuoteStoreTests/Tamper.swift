import GRDB

/// Edits the database directly, as a bug or an operator's mistake would.
func tamper(_ path: String, _ body: (Database) throws -> Void) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write(body)
}
