public import Configuration

extension MetricsServer {
    /// Where the metrics are served, read from the `metrics` section.
    ///
    /// Keys (file key / environment variable / flag of `quoted`):
    /// - `metrics.listen` / `QUOTED_METRICS_LISTEN` / `--metrics`: `HOST:PORT` to serve
    ///   `/metrics`, `/healthz` and `/readyz` on (an IPv6 host in brackets, `[::1]:9464`; port 0
    ///   picks a free one, logged as "metrics listening"). Unset: no HTTP server, and the
    ///   metrics cost nothing. Nothing authenticates its clients: an address beyond loopback
    ///   stops start-up unless `metrics.allowRemote` is true.
    /// - `metrics.allowRemote` / `QUOTED_METRICS_ALLOW_REMOTE`: `true` lets `listen` be an
    ///   address beyond loopback (then keep it on a private network); default false. Apart
    ///   from `allowInsecure`, which concerns the command and event sockets.
    public struct Configuration: Sendable, Hashable {
        /// The address to bind: a host name, an IPv4 address, or an IPv6 one without brackets.
        public var host: String
        /// The TCP port; 0 for any free one.
        public var port: Int
        /// Whether `host` may be beyond loopback.
        public var allowRemote: Bool

        /// Whether only this host can reach it: `localhost`, `::1` or an address in
        /// `127.0.0.0/8`. The HTTP side authenticates no one, so the daemon serves it beyond
        /// this host only with ``allowRemote``.
        public var isLoopback: Bool {
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return host == "localhost" || host == "::1"
                || (parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil })
        }

        /// Refuses an address beyond loopback, unless ``allowRemote``.
        public func checkReach() throws(MetricsConfigurationError) {
            guard !isLoopback, !allowRemote else { return }
            throw MetricsConfigurationError(
                value: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)",
                reason:
                    "is reachable beyond this host, and nothing authenticates its clients; bind loopback, or set metrics.allowRemote: true on purpose"
            )
        }

        /// Serving on `host:port`; beyond loopback only with `allowRemote`.
        public init(host: String, port: Int, allowRemote: Bool = false) {
            self.host = host
            self.port = port
            self.allowRemote = allowRemote
        }

        /// Reads `listen` and `allowRemote` from `reader` (scoped to `metrics`); `nil` when
        /// `listen` is unset or empty.
        public init?(reader: ConfigReader) throws(MetricsConfigurationError) {
            guard let listen = reader.string(forKey: "listen"), !listen.isEmpty else { return nil }
            try self.init(listen: listen)
            allowRemote = reader.bool(forKey: "allowRemote") ?? (reader.string(forKey: "allowRemote") == "true")
        }

        /// Parses `HOST:PORT`.
        public init(listen: String) throws(MetricsConfigurationError) {
            guard let colon = listen.lastIndex(of: ":") else {
                throw MetricsConfigurationError(value: listen, reason: "expected HOST:PORT, like 127.0.0.1:9464")
            }
            var host = String(listen[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else {
                throw MetricsConfigurationError(value: listen, reason: "the host is missing (127.0.0.1:9464)")
            }
            guard let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
                throw MetricsConfigurationError(value: listen, reason: "the port must be a number from 0 to 65535")
            }
            self.init(host: host, port: port)
        }
    }
}

/// A `metrics.listen` that cannot be used, with why.
public struct MetricsConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The value as given.
    public let value: String
    /// What is wrong with it.
    public let reason: String

    /// The key, the value and the reason, as start-up logs them.
    public var description: String { "invalid configuration: metrics.listen: \"\(value)\": \(reason)" }
}
