public import QuoteCore
public import QuoteWire

/// Why a ``Quoted`` or ``CommandClient`` call failed: a refusal by quoted (with its code and
/// every problem it returned), a submission the builder found wrong before sending, no answer
/// in time, or a client-side fault. Codes can grow; switch on ``code`` with a default.
public struct QuotedError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case refused, invalidSubmission, timedOut, unavailable, usage, cancelled, `internal`
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// quoted answered with an error; ``QuotedError/refusal`` has its code and problems.
        public static let refused = Code(.refused)
        /// ``SubmissionBuilder/build()`` found problems; nothing was sent.
        public static let invalidSubmission = Code(.invalidSubmission)
        /// No reply in time, retries included, or quoted cannot be reached. A write other than
        /// `submit` may or may not have been applied: read the quote to know.
        public static let timedOut = Code(.timedOut)
        /// quoted answers but cannot serve: its store is down.
        public static let unavailable = Code(.unavailable)
        /// An endpoint or a key that cannot be used.
        public static let usage = Code(.usage)
        /// The caller's task was cancelled while its request waited its turn; it was not sent.
        public static let cancelled = Code(.cancelled)
        /// Something that should not happen, such as a reply that cannot be read.
        public static let `internal` = Code(.internal)

        /// The kind's name, for messages.
        public var description: String {
            switch base {
            case .refused: "refused"
            case .invalidSubmission: "invalid submission"
            case .timedOut: "timed out"
            case .unavailable: "unavailable"
            case .usage: "usage"
            case .cancelled: "cancelled"
            case .internal: "internal"
            }
        }

        /// The exit status a command-line tool reports (sysexits): 1 refused, 64 usage or an
        /// invalid submission, 69 no answer or unavailable, 70 internal (and cancelled, which a
        /// command-line tool does not do).
        public var exitStatus: Int32 {
            switch base {
            case .refused: 1
            case .invalidSubmission, .usage: 64
            case .timedOut, .unavailable: 69
            case .internal, .cancelled: 70
            }
        }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, for people: quoted's message for a refusal.
    public let message: String
    /// quoted's error, for ``Code/refused``: its `code` (`invalid_submission`,
    /// `mechanic_busy`, ...), message and problems.
    public let refusal: WireError?
    /// Every problem found: the builder's, or those quoted returned.
    public var problems: [Problem] { builderProblems ?? refusal?.problems ?? [] }
    private let builderProblems: [Problem]?

    /// Creates an error that is not a refusal.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        refusal = nil
        builderProblems = nil
    }

    /// The error for a refusal by quoted.
    public init(refusal: WireError) {
        code = .refused
        message = refusal.message
        self.refusal = refusal
        builderProblems = nil
    }

    init(problems: [Problem]) {
        code = .invalidSubmission
        message = "the submission has \(problems.count) problem\(problems.count == 1 ? "" : "s")"
        refusal = nil
        builderProblems = problems
    }

    /// The error for a reply that is not what its request's operation answers with.
    public static func unexpectedReply(to operation: Operation) -> QuotedError {
        QuotedError(.internal, "quoted's reply to \(operation.rawValue) is not what that operation answers with")
    }

    /// The message, with quoted's code and every problem.
    public var description: String {
        let details = problems.map { "\n  - \($0.field): \($0.message)" }.joined()
        return "\(refusal.map { $0.code.rawValue } ?? code.description): \(message)\(details)"
    }
}
