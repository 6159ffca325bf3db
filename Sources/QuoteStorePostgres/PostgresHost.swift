/// One server a store's URL names: a primary or one of its standbys.
struct PostgresHost: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address (an IPv6 address without brackets).
    var name: String
    var port: Int

    var description: String { name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)" }
}
