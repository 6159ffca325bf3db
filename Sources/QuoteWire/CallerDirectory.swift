/// A client as the allow-list knows it, for authorizing its requests.
public struct Caller: Sendable, Hashable {
    /// What the audit trail records: the certificate's `name`, or its key without one.
    public var name: String
    /// What the client may do.
    public var role: Role

    /// A caller named `name` with `role`.
    public init(name: String, role: Role) {
        self.name = name
        self.role = role
    }
}

/// Where the request decoder looks up who sent a request: the connection's key, as the ZAP
/// handler named it (`User-Id`), in the list of clients of this moment.
public protocol CallerDirectory: Sendable {
    /// The listed client whose connection is named `userId`; `nil` for one not listed (any
    /// more), or a connection without a name.
    func caller(userId: String?) -> Caller?
}
