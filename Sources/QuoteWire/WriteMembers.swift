/// What a successful write's reply shows beside its quote: the members of `WireReply` that a
/// write sets (``JSONWriter/writeReply(id:_:writing:currency:)``).
struct WriteMembers {
    var replayed: Bool?
    var bookingError: WireError?
    var waitPosition: Int?
    var mechanic: WireQuote.WireMechanic?
    var onDuty: Bool?
    var catalogVersion: Int64?

    /// The successful reply to request `id` with these members: what a write's reply shows
    /// when it has no quote, and what one with a quote is written as.
    func reply(to id: RequestID?) -> WireReply {
        var reply = WireReply.success(id)
        reply.replayed = replayed
        reply.bookingError = bookingError
        reply.waitPosition = waitPosition
        reply.mechanic = mechanic
        reply.onDuty = onDuty
        reply.catalogVersion = catalogVersion
        return reply
    }
}
