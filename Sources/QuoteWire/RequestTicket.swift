/// What the receiving side keeps of one request to answer it and count it: its return
/// address, its id, its operation and when it came; for a request refused at once, the reply
/// itself. The store side carries tickets through a batch without reading them.
public struct RequestTicket: Sendable {
    /// The ROUTER envelope the reply goes back on; empty for a request that cannot be
    /// answered (an envelope too deep) and for the daemon's own work.
    public var envelope: [[UInt8]]
    /// The request's `id`, echoed in the reply.
    public var id: RequestID?
    /// The operation, for the figures; `nil` when the request named none that exists.
    public var op: Operation?
    /// When the request was received; `nil` for the daemon's own work, which is not counted.
    public var received: ContinuousClock.Instant?
    /// The error code the request was answered with; `nil` while unanswered or when `ok`.
    public var code: WireError.Code?
    /// The reply of a request refused before the store (its body frame), written at once.
    public var refusal: [UInt8]?

    /// The ticket of the daemon's own work: answered to no one, counted nowhere.
    public static let daemon = RequestTicket(envelope: [], id: nil, op: nil, received: nil)
}
