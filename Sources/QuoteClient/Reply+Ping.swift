import QuoteWire

extension Reply {
    /// The log's last `seq`, read from this answer to `ping`; a store that is down is
    /// ``QuotedError/Code/unavailable`` (where the log stands is not known then).
    func lastSequence() throws(QuotedError) -> Int64 {
        guard case .pong(let store) = self else { throw QuotedError.unexpectedReply(to: .ping) }
        switch store {
        case .success(let lastSeq): return lastSeq
        case .failure(let down):
            throw QuotedError(.unavailable, "quoted answers, but its store is down: \(down.message)")
        }
    }
}
