/// What a client key may do, named in its certificate's metadata (`role = "operator"`):
/// `operator` everything; `support` read, watch, and act on quotes for customers (resolve,
/// book, cancel); `client` submit and act on its own quotes; `observer` read only.
public enum Role: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case `operator`, support, client, observer

    public var description: String { rawValue }
}
