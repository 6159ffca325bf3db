import QuoteWire

/// One request's place in the daemon's figures: which operation it asked for, when it was
/// received and, once answered, how (`nil` for `ok`, else the error code).
struct RequestMark: Sendable {
    /// The operation, `nil` when the request named none that exists (or could not be read).
    var op: QuoteWire.Operation?
    /// When the I/O thread received it.
    var received: ContinuousClock.Instant
    /// The error code it was answered with; `nil` while unanswered or when answered `ok`.
    var code: WireError.Code?
}
