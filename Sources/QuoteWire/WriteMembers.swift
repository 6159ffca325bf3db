/// What a successful write's reply shows beside its quote: the members of `WireReply` that a
/// write sets (``JSONWriter/writeReply(id:_:writing:currency:)``).
struct WriteMembers {
    var replayed: Bool?
    var bookingError: WireError?
    var waitPosition: Int?
    var mechanic: WireQuote.WireMechanic?
    var onDuty: Bool?
    var catalogVersion: Int64?
}
