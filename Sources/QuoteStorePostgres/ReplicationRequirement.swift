import Synchronization

/// Whether the server last said that it requires synchronous replication, so that a store on a
/// server that does not skips the check after each commit
/// (``PostgresQuoteStore/confirmReplicated(_:_:)``): the answer is asked again by the first
/// commit after it is a second old. A server reloaded to require it is checked within that
/// second; until then its commits still wait for their standby, as it requires.
final class ReplicationRequirement: Sendable {
    private let state = Mutex<(required: Bool, asked: ContinuousClock.Instant)?>(nil)

    init() {}

    /// Whether the last answer, less than a second old, was "not required".
    var isKnownNotRequired: Bool {
        state.withLock { state in
            guard let state else { return false }
            return !state.required && state.asked.duration(to: .now) < .seconds(1)
        }
    }

    /// Records the server's answer.
    func record(required: Bool) {
        state.withLock { $0 = (required, .now) }
    }
}
