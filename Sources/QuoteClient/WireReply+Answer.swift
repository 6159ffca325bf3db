public import QuoteWire

extension WireReply {
    /// The reply as the answer `request`'s operation gives; a reply without what that
    /// operation answers with is ``QuotedError/Code/internal``. (A refusal is thrown before
    /// this, by ``CommandClient/checked(_:retries:deadline:)``.)
    public func answer(to request: Request) throws(QuotedError) -> Reply {
        guard let answer = Reply(self, answering: request.operation) else {
            throw QuotedError.unexpectedReply(to: request.operation)
        }
        return answer
    }
}
