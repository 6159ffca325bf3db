public import QuoteCore

/// An error as it goes on the wire: `{"code":"snake_case","message":"...","problems":[...]}`.
public struct WireError: Error, Codable, Sendable, Hashable, CustomStringConvertible {
    /// The error codes of protocol version 1; domain codes pass through by name.
    public struct Code: RawRepresentable, Codable, Sendable, Hashable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The frame is not valid JSON (or not UTF-8).
        public static let invalidJSON = Code(rawValue: "invalid_json")
        /// `v` is missing or not 1.
        public static let unsupportedVersion = Code(rawValue: "unsupported_version")
        /// `op` names no operation.
        public static let unknownOp = Code(rawValue: "unknown_op")
        /// A field is missing, mistyped or out of range; see `problems`.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// The request is larger than the configured maximum.
        public static let messageTooLarge = Code(rawValue: "message_too_large")
        /// The message is not one JSON frame after an optional envelope.
        public static let malformedEnvelope = Code(rawValue: "malformed_envelope")
        /// The store failed; nothing was applied, so a retry is safe. Unless the message says the
        /// outcome is unknown (it failed while committing): then it may have been applied, and a
        /// retry is safe only with the same idempotency key; check first (`get`) otherwise.
        public static let storageError = Code(rawValue: "storage_error")
        /// The caller's role may not do this operation (the message names both), or its key
        /// was withdrawn from the allow-list since it connected. Nothing was applied.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The daemon is stopping and takes no more requests.
        public static let shuttingDown = Code(rawValue: "shutting_down")
        /// A catalog that cannot be put in force (`applyCatalog`): ``WireError/problems`` says
        /// where.
        public static let invalidCatalog = Code(rawValue: "invalid_catalog")
    }

    public var code: Code
    public var message: String
    public var problems: [Problem]?

    /// Creates an error.
    public init(code: Code, message: String, problems: [Problem]? = nil) {
        self.code = code
        self.message = message
        self.problems = problems?.isEmpty == true ? nil : problems.map(QuoteLimits.capped)
    }

    /// The wire form of a domain refusal, keeping its code and every problem.
    public init(_ error: QuoteError) {
        self.init(code: Code(rawValue: error.code.description), message: error.message, problems: error.problems)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
