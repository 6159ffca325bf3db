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
    ///   `?sslmode=require` asks for TLS, `disable` (the default) does not).
    /// - `poolSize`: connections per daemon, 2 to 100; default 8. One of them listens for the
    ///   other daemons' appends.
    /// - `connectTimeoutMilliseconds`: how long a connection attempt may take, 100 to 60,000; default 5,000.
    /// - `acquireTimeoutMilliseconds`: how long a request waits for a connection of the pool,
    ///   while the server accepts connections but has none to give (busy, out of sessions),
    ///   before it gets `storage_error`, 1,000 to 600,000; default 30,000. A server that refuses
    ///   connections (down, restarting) fails requests within a second.
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
        }

        private static func integer(
            _ reader: ConfigReader, _ key: String, in range: ClosedRange<Int>
        ) throws(StoreError) -> Int? {
            do {
                return try reader.wholeNumber(forKey: key, in: range)
            } catch {
                throw StoreError(.configuration, "store.postgres.\(key): \(error.reason)")
            }
        }

        /// The URL without its password, for logs.
        public var redactedURL: String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "***"
            return components.string ?? "(url)"
        }

        /// Where the server listens.
        var server: (host: String, port: Int) { (parts.host, parts.port) }

        /// The client configuration for postgres-nio.
        var client: PostgresClient.Configuration {
            var configuration = PostgresClient.Configuration(
                host: parts.host, port: parts.port, username: parts.user, password: parts.password,
                database: parts.database, tls: parts.tls ? .require(.makeClientConfiguration()) : .disable)
            configuration.options.maximumConnections = poolSize
            configuration.options.connectTimeout = connectTimeout
            return configuration
        }

        private struct Parts: Sendable {
            var host: String
            var port: Int
            var user: String
            var password: String?
            var database: String
            var tls: Bool
        }

        private static func parse(_ url: String) throws(StoreError) -> Parts {
            guard let components = URLComponents(string: url),
                components.scheme == "postgresql" || components.scheme == "postgres"
            else {
                throw StoreError(
                    .configuration,
                    "store.postgres.url: not a URL like postgresql://user:password@host:5432/quoted")
            }
            guard let host = components.host, !host.isEmpty else {
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
            return Parts(
                host: host, port: components.port ?? 5432, user: user.removingPercentEncoding ?? user,
                password: components.password.map { $0.removingPercentEncoding ?? $0 },
                database: database.isEmpty ? "quoted" : database, tls: mode == "require")
        }
    }
}
