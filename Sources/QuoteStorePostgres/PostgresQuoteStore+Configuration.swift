public import Configuration
import Foundation
import PostgresNIO
public import QuoteStore

extension PostgresQuoteStore {
    /// How to reach the database, and the pool's size.
    ///
    /// Keys, under the store's section (`store.postgres` in quoted's configuration):
    /// - `url` / `QUOTED_STORE_POSTGRES_URL` / quoted's `--postgres`:
    ///   `postgresql://user:password@host:port/database` (port 5432 and database `quoted` by default;
    ///   `?sslmode=require` asks for TLS, `disable` (the default) does not). Several hosts, as
    ///   libpq writes them (`postgresql://user@h1:5432,h2:5432/quoted?target_session_attrs=read-write`),
    ///   name a primary and its standbys: quoted uses the one that accepts writes, and after
    ///   losing it tries them again, in order, until one does. It never writes to a standby,
    ///   whatever `target_session_attrs` says (`read-write`, `primary` or `any`; the others
    ///   are refused).
    /// - `poolSize`: connections per daemon, 2 to 100; default 8. One of them listens for the
    ///   other daemons' appends.
    /// - `connectTimeoutMilliseconds`: how long a connection attempt may take, 100 to 60,000; default 5,000.
    /// - `acquireTimeoutMilliseconds`: how long a request waits for a connection of the pool,
    ///   while the server accepts connections but has none to give (busy, out of sessions),
    ///   before it gets `storage_error`, 1,000 to 600,000; default 30,000. A server that refuses
    ///   connections (down, restarting) fails requests within a second.
    /// - `transactionTimeoutMilliseconds`: how long one store call may run on its connection,
    ///   commit included, 1,000 to 600,000; default 30,000. A commit that waits for a synchronous
    ///   standby that is down waits this long; then the request gets `storage_error` (its outcome
    ///   unknown: never acknowledged) and the connection is closed.
    public struct Configuration: Sendable {
        /// The URL, password included.
        public let url: String
        /// The URL's parts, read once when it is given.
        private let parts: Parts
        /// The most connections the pool opens.
        public var poolSize: Int = 8
        /// How long a connection attempt may take.
        public var connectTimeout: Duration = .seconds(5)
        /// How long a request waits for a connection of a server that accepts connections.
        public var acquireTimeout: Duration = .seconds(30)
        /// How long one store call may run on its connection, commit included.
        public var transactionTimeout: Duration = .seconds(30)
        /// What pruning keeps.
        public var retention = EventRetention()

        /// A configuration for `url`, checked: throws `StoreError.Code.configuration` naming
        /// what is wrong with it.
        public init(url: String) throws(StoreError) {
            self.url = url
            parts = try Self.parse(url)
        }

        /// Reads the keys above from `reader` (scoped to the store's section).
        public init(reader: ConfigReader) throws(StoreError) {
            guard let url = reader.string(forKey: "url"), !url.isEmpty else {
                throw StoreError(.configuration, "store.postgres.url: is required")
            }
            try self.init(url: url)
            poolSize = try Self.integer(reader, "poolSize", in: 2...100) ?? poolSize
            if let timeout = try Self.integer(reader, "connectTimeoutMilliseconds", in: 100...60_000) {
                connectTimeout = .milliseconds(timeout)
            }
            if let timeout = try Self.integer(reader, "acquireTimeoutMilliseconds", in: 1_000...600_000) {
                acquireTimeout = .milliseconds(timeout)
            }
            if let timeout = try Self.integer(reader, "transactionTimeoutMilliseconds", in: 1_000...600_000) {
                transactionTimeout = .milliseconds(timeout)
            }
        }

        private static func integer(
            _ reader: ConfigReader, _ key: String, in range: ClosedRange<Int>
        ) throws(StoreError) -> Int? {
            do {
                let configKey = ConfigKey(key)
                return try WholeNumberSetting.value(
                    number: reader.int(forKey: configKey), text: reader.string(forKey: configKey), in: range)
            } catch {
                throw StoreError(.configuration, "store.postgres.\(key): \(error.reason)")
            }
        }

        /// The URL without its password, for logs.
        public var redactedURL: String {
            guard let (scheme, authority, rest) = Self.split(url), let at = authority.lastIndex(of: "@"),
                let colon = authority[..<at].firstIndex(of: ":")
            else { return url }
            return scheme + "://" + authority[..<colon] + ":***" + authority[at...] + rest
        }

        /// `scheme://authority/rest` in its three parts; `nil` without `://`.
        private static func split(_ url: String) -> (scheme: String, authority: String, rest: String)? {
            guard let separator = url.range(of: "://") else { return nil }
            let afterScheme = url[separator.upperBound...]
            let end = afterScheme.firstIndex { $0 == "/" || $0 == "?" } ?? afterScheme.endIndex
            return (String(url[..<separator.lowerBound]), String(afterScheme[..<end]), String(afterScheme[end...]))
        }

        /// The hosts of an authority's host list (`h1:5432,[::1]:5433,h3`), in order.
        private static func hosts(_ list: Substring) throws(StoreError) -> [PostgresHost] {
            var hosts: [PostgresHost] = []
            for entry in list.split(separator: ",", omittingEmptySubsequences: false) {
                var name = entry
                var port = 5432
                if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") {
                    name = entry[entry.index(after: entry.startIndex)..<close]
                    let after = entry[entry.index(after: close)...]
                    if !after.isEmpty {
                        guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else {
                            throw StoreError(.configuration, "store.postgres.url: host \(entry) has no valid port")
                        }
                        port = number
                    }
                } else if let colon = entry.lastIndex(of: ":") {
                    name = entry[..<colon]
                    guard let number = Int(entry[entry.index(after: colon)...]) else {
                        throw StoreError(.configuration, "store.postgres.url: host \(entry) has no valid port")
                    }
                    port = number
                }
                guard !name.isEmpty else { throw StoreError(.configuration, "store.postgres.url: names an empty host") }
                guard (1...65_535).contains(port) else {
                    throw StoreError(.configuration, "store.postgres.url: port \(port) of \(name) is outside 1...65535")
                }
                hosts.append(PostgresHost(name: String(name), port: port))
            }
            return hosts
        }

        /// The servers the URL names, in its order: a primary and its standbys.
        var hosts: [PostgresHost] { parts.hosts }

        /// The pool's configuration for postgres-nio, on `host`.
        func client(on host: PostgresHost) -> PostgresClient.Configuration {
            var configuration = PostgresClient.Configuration(
                host: host.name, port: host.port, username: parts.user, password: parts.password,
                database: parts.database, tls: parts.tls ? .require(.makeClientConfiguration()) : .disable)
            configuration.options.maximumConnections = poolSize
            configuration.options.connectTimeout = connectTimeout
            // How its sessions are told from others' (`pg_stat_activity`), to end those it gave up on.
            configuration.options.additionalStartupParameters = [
                ("application_name", PostgresQuoteStore.applicationName)
            ]
            return configuration
        }

        private struct Parts: Sendable {
            var hosts: [PostgresHost]
            var user: String
            var password: String?
            var database: String
            var tls: Bool
        }

        private static func parse(_ url: String) throws(StoreError) -> Parts {
            // URLComponents reads one host: the list is read here, and the rest of the URL with
            // its first host alone.
            guard let (scheme, authority, rest) = split(url) else {
                throw StoreError(
                    .configuration,
                    "store.postgres.url: not a URL like postgresql://user:password@host:5432/quoted")
            }
            let at = authority.lastIndex(of: "@")
            let list = authority[(at.map { authority.index(after: $0) } ?? authority.startIndex)...]
            let hosts = try hosts(list)
            let userInfo = at.map { authority[...$0] } ?? ""
            let single = scheme + "://" + userInfo + (list.split(separator: ",").first ?? "") + rest
            guard let components = URLComponents(string: single),
                components.scheme == "postgresql" || components.scheme == "postgres"
            else {
                throw StoreError(
                    .configuration,
                    "store.postgres.url: not a URL like postgresql://user:password@host:5432/quoted")
            }
            guard components.host?.isEmpty == false else {
                throw StoreError(.configuration, "store.postgres.url: names no host")
            }
            guard let user = components.user, !user.isEmpty else {
                throw StoreError(.configuration, "store.postgres.url: names no user")
            }
            let database = String(components.path.drop { $0 == "/" })
            let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
            guard ["disable", "require"].contains(mode) else {
                throw StoreError(.configuration, "store.postgres.url: sslmode \(mode) is not disable or require")
            }
            let attributes = components.queryItems?.first { $0.name == "target_session_attrs" }?.value ?? "any"
            guard ["any", "read-write", "primary"].contains(attributes) else {
                throw StoreError(
                    .configuration,
                    "store.postgres.url: target_session_attrs \(attributes) is not read-write, primary or any"
                        + " (quoted writes: it always uses the host that accepts writes)")
            }
            return Parts(
                hosts: hosts, user: user.removingPercentEncoding ?? user,
                password: components.password.map { $0.removingPercentEncoding ?? $0 },
                database: database.isEmpty ? "quoted" : database, tls: mode == "require")
        }
    }
}
