/// Receives a quote's message for its customer piece by piece
/// (``Quote/writeCustomerMessage(into:)``): a writer copies the pieces where they go, without
/// a `String` built for the whole message first.
public protocol CustomerMessageSink: ~Copyable {
    /// Fixed wording.
    mutating func append(fixed text: StaticString)
    /// A name or a notice.
    mutating func append(text: String)
    /// An amount, as ``Money/formatted`` shows it.
    mutating func append(amount: Money)
}
