import Foundation
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

extension ReplicationRequirement {
    /// How many synchronous standbys must have a commit under `names`, the server's
    /// `synchronous_standby_names`: `n` in `FIRST n (...)`, `ANY n (...)` or `n (...)`; one
    /// for a plain list of names. Never less than one.
    static func standbysRequired(by names: String) -> Int {
        var rest = Substring(names.trimmingCharacters(in: .whitespaces))
        for keyword in ["FIRST", "ANY"] where rest.uppercased().hasPrefix(keyword) {
            let after = rest.dropFirst(keyword.count)
            // A keyword, not the start of a standby's name.
            guard after.first?.isWhitespace == true else { continue }
            rest = after.drop(while: \.isWhitespace)
        }
        let digits = rest.prefix(while: \.isASCII).prefix(while: \.isNumber)
        let afterDigits = rest.dropFirst(digits.count).drop(while: \.isWhitespace)
        guard !digits.isEmpty, digits.count <= 6, afterDigits.first == "(", let count = Int(digits) else { return 1 }
        return max(count, 1)
    }
}
