public import Configuration
import Foundation
import QuoteStore

/// The daemon's settings, read once at start-up through one `ConfigReader` (flags, then
/// `QUOTED_*` environment variables, then the YAML file, then these defaults). The store's own
/// settings are its section's, `store.<kind>`, read by the store's configuration.
///
/// Keys (file key / environment variable / flag):
/// - `endpoint` / `QUOTED_ENDPOINT` / `--endpoint`: the ROUTER for commands; default `tcp://127.0.0.1:5555`.
/// - `events` / `QUOTED_EVENTS` / `--events`: the PUB for events; default `tcp://127.0.0.1:5556`.
/// - `stateDirectory` / `QUOTED_STATE_DIRECTORY` / `--state-dir`: where the embedded SQLite store's `quoted.sqlite` lives;
///   default `var/quoted`.
/// - `catalog` / `QUOTED_CATALOG` / `--catalog`: a YAML or JSON catalog file, seeding a store that has none; default the built-in catalog.
/// - `maxMessageBytes` / `QUOTED_MAX_MESSAGE_BYTES` / `--max-message-bytes`: the largest request answered, 256 to
///   16,777,216; default 65,536. Frames over twice this are dropped by libzmq (`ZMQ_MAXMSGSIZE`) with the connection.
/// - `logLevel` / `QUOTED_LOG_LEVEL` / `--log-level`: trace, debug, info, notice, warning, error, critical; default info.
/// - `retention.minimumAgeHours` / `QUOTED_RETENTION_MINIMUM_AGE_HOURS` / `--retention-hours`: events younger are kept,
///   0 to 87,600; default 168.
/// - `retention.minimumEvents` / `QUOTED_RETENTION_MINIMUM_EVENTS` / `--retention-events`: at least this many of the latest events
///   are kept, 0 to 1,000,000,000; default 100,000.
/// - `maxBatch` / `QUOTED_MAX_BATCH`: requests per group commit, 1 to 10,000; default 1,024.
/// - `security.serverKey` / `QUOTED_SECURITY_SERVER_KEY` / `--server-key`: the daemon's secret CURVE certificate
///   (czmq `zcert`, `NAME.key_secret`). With it, both sockets are CURVE servers that let in only listed keys.
/// - `security.clientsDirectory` / `QUOTED_SECURITY_CLIENTS_DIRECTORY` / `--clients`: the allow-list, one public
///   certificate (`NAME.key`) per client, its role in metadata (`role = "operator"`, `support`, `client` or `observer`);
///   re-read on SIGHUP. Required with `security.serverKey`, and it with it.
/// - `allowInsecure` / `QUOTED_ALLOW_INSECURE`: `true` lets `endpoint` and `events` bind beyond this host (any address
///   but loopback, `ipc://` and `inproc://`) without `security`; default false, and such a bind stops start-up.
/// - `maxConnections` / `QUOTED_MAX_CONNECTIONS`: connections to both sockets together past which, with `security`,
///   new handshakes are refused, 1 to 1,000,000; default 4,096. A connection counts from its accept, so one that never
///   completes its handshake counts until the handshake timeout (10 s) drops it; the count follows the sockets'
///   monitors, so it may trail a connection by a moment. Keep it below the open-files limit.
/// - `maxConnectionsPerAddress` / `QUOTED_MAX_CONNECTIONS_PER_ADDRESS`: connections from one IPv4 address, or one IPv6
///   /64, past which, with `security`, its new handshakes are refused, 1 to 1,000,000; default 256. An address counts
///   toward `maxConnections` for this many at most, so peers of one address that connect and never finish a handshake
///   cannot lock other addresses out. Raise it for many clients behind one NAT.
/// - `highWaterMark` / `QUOTED_HIGH_WATER_MARK`: the most messages queued per peer, whatever the byte budgets below
///   allow, 1 to 10,000,000; default 10,000.
/// - `maxReplyBytes` / `QUOTED_MAX_REPLY_BYTES`: the largest page a read replies with (`list`, `events`, `waiting`,
///   `mechanics`, `services`), 4,096 to 16,777,216; default 65,536. A page that would be larger ends early, marked
///   `truncated`.
/// - `peerQueueBytes` / `QUOTED_PEER_QUEUE_BYTES`: bytes queued for one peer of the commands socket, each way, 65,536
///   to 1,073,741,824; default 67,108,864. Replies to a peer that does not read them past it are dropped; its requests
///   wait in its TCP connection.
/// - `eventQueueBytes` / `QUOTED_EVENT_QUEUE_BYTES`: bytes a subscriber that stops reading can hold, 1,048,576 to
///   4,294,967,296; default 33,554,432: the last `highWaterMark` events published never add up to more (an event that
///   would take them past it is not published live, and subscribers fill the gap by `seq`).
public struct DaemonConfiguration: Sendable, Hashable {
    public var endpoint: String
    public var events: String
    public var stateDirectory: String
    public var catalogFile: String?
    public var maxMessageBytes: Int
    public var logLevel: String
    public var retentionHours: Int
    public var retentionEvents: Int
    public var maxBatch: Int
    public var highWaterMark: Int
    public var maxConnections: Int
    public var maxConnectionsPerAddress: Int
    public var maxReplyBytes: Int
    public var peerQueueBytes: Int
    public var eventQueueBytes: Int
    public var allowInsecure: Bool
    /// The daemon's secret certificate, with `security`.
    public var serverKeyFile: String?
    /// The allow-list's directory, with `security`.
    public var clientsDirectory: String?

    /// Whether both sockets authenticate their peers (`security` is set).
    public var isSecure: Bool { serverKeyFile != nil }

    /// Reads and validates every key, reporting the first wrong one by name.
    public init(reader: ConfigReader) throws(ConfigurationError) {
        endpoint = try Self.endpoint(reader, .endpoint)
        events = try Self.endpoint(reader, .events)
        stateDirectory =
            reader.string(forKey: ConfigKey(Key.stateDirectory.name)) ?? Key.stateDirectory.defaultText ?? ""
        if stateDirectory.isEmpty {
            throw ConfigurationError(key: Key.stateDirectory.name, reason: "must not be empty")
        }
        catalogFile = reader.string(forKey: ConfigKey(Key.catalog.name)).flatMap { $0.isEmpty ? nil : $0 }
        maxMessageBytes = try Self.integer(reader, .maxMessageBytes)
        logLevel = (reader.string(forKey: ConfigKey(Key.logLevel.name)) ?? Key.logLevel.defaultText ?? "").lowercased()
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        guard levels.contains(logLevel) else {
            throw ConfigurationError(
                key: Key.logLevel.name, reason: "\"\(logLevel)\" is not one of \(levels.joined(separator: ", "))")
        }
        retentionHours = try Self.integer(reader, .retentionHours)
        retentionEvents = try Self.integer(reader, .retentionEvents)
        maxBatch = try Self.integer(reader, .maxBatch)
        highWaterMark = try Self.integer(reader, .highWaterMark)
        maxConnections = try Self.integer(reader, .maxConnections)
        maxConnectionsPerAddress = try Self.integer(reader, .maxConnectionsPerAddress)
        maxReplyBytes = try Self.integer(reader, .maxReplyBytes)
        peerQueueBytes = try Self.integer(reader, .peerQueueBytes)
        eventQueueBytes = try Self.integer(reader, .eventQueueBytes)
        allowInsecure =
            reader.bool(forKey: ConfigKey(Key.allowInsecure.name))
            ?? (reader.string(forKey: ConfigKey(Key.allowInsecure.name)) == "true")
        serverKeyFile = reader.string(forKey: ConfigKey(Key.serverKeyFile.name)).flatMap { $0.isEmpty ? nil : $0 }
        clientsDirectory = reader.string(forKey: ConfigKey(Key.clientsDirectory.name)).flatMap { $0.isEmpty ? nil : $0 }
        if serverKeyFile != nil && clientsDirectory == nil {
            throw ConfigurationError(
                key: "security.clientsDirectory",
                reason: "is required with security.serverKey: without an allow-list no client could connect")
        }
        if clientsDirectory != nil && serverKeyFile == nil {
            throw ConfigurationError(
                key: "security.serverKey", reason: "is required with security.clientsDirectory")
        }
        if !allowInsecure && !isSecure {
            for (key, value) in [("endpoint", endpoint), ("events", events)] where !Self.isLocal(value) {
                throw ConfigurationError(
                    key: key,
                    reason:
                        "\"\(value)\" is reachable beyond this host, and nothing authenticates its peers; configure security (serverKey and clientsDirectory), bind loopback, ipc:// or inproc://, or set allowInsecure: true on purpose"
                )
            }
        }
        for (old, new) in Self.moved
        where reader.string(forKey: ConfigKey(old)) != nil || reader.int(forKey: ConfigKey(old)) != nil {
            throw ConfigurationError(key: old, reason: "moved to \(new)")
        }
    }

    /// Whether a bind on `endpoint` is reachable from this host only: loopback TCP (`127.0.0.0/8`,
    /// `::1`, `localhost`, the `lo` interface), `ipc://` or `inproc://`.
    public static func isLocal(_ endpoint: String) -> Bool {
        if endpoint.hasPrefix("ipc://") || endpoint.hasPrefix("inproc://") { return true }
        guard endpoint.hasPrefix("tcp://") else { return false }
        let address = endpoint.dropFirst("tcp://".count)
        guard let colon = address.lastIndex(of: ":") else { return false }
        let host = address[..<colon]
        return host == "localhost" || host == "lo" || host == "[::1]" || host == "::1"
            || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }

    /// The commands socket's queue per peer for replies, in messages: ``peerQueueBytes`` of
    /// the largest replies (libzmq counts messages, not bytes). A reply is at most twice the
    /// larger of ``maxReplyBytes`` and ``maxMessageBytes``: a page, or a `get`'s history, ends
    /// before the first; a write's quote is its request's text, escaped; at least one.
    public var replyHighWaterMark: Int {
        min(highWaterMark, max(1, peerQueueBytes / (2 * max(maxReplyBytes, maxMessageBytes))))
    }

    /// The commands socket's queue per peer for requests, in messages: ``peerQueueBytes`` of
    /// the largest requests libzmq takes, frames of twice ``maxMessageBytes``; at least one.
    public var requestHighWaterMark: Int {
        min(highWaterMark, max(1, peerQueueBytes / (2 * maxMessageBytes)))
    }

    /// The events socket's queue per subscriber, in messages; ``eventQueueBytes`` bounds
    /// the bytes (``EventWindow``).
    public var eventHighWaterMark: Int { highWaterMark }

    /// Keys that moved under the store's section, with where they are now.
    public static let moved = [
        ("synchronous", "store.sqlite.synchronous"), ("checkpointPages", "store.sqlite.checkpointPages"),
    ]

    /// The SQLite file inside the state directory.
    public var databasePath: String {
        (stateDirectory as NSString).appendingPathComponent("quoted.sqlite")
    }

    private static func endpoint(_ reader: ConfigReader, _ setting: Key) throws(ConfigurationError) -> String {
        let key = setting.name
        let value = reader.string(forKey: ConfigKey(key)) ?? setting.defaultText ?? ""
        let transports = ["tcp://", "ipc://", "inproc://"]
        guard transports.contains(where: value.hasPrefix), value.count > 8 else {
            throw ConfigurationError(
                key: key, reason: "\"\(value)\" is not a ZeroMQ endpoint like tcp://127.0.0.1:5555")
        }
        return value
    }

    private static func integer(_ reader: ConfigReader, _ setting: Key) throws(ConfigurationError) -> Int {
        do {
            let key = ConfigKey(setting.name)
            return try WholeNumberSetting.value(
                number: reader.int(forKey: key), text: reader.string(forKey: key),
                in: setting.range ?? Int.min...Int.max)
                ?? setting.integerDefault ?? 0
        } catch {
            throw ConfigurationError(key: setting.name, reason: error.reason)
        }
    }
}

/// A configuration value that cannot be used, named by its key.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The key, as written in the file.
    public let key: String
    /// What is wrong with its value.
    public let reason: String

    public var description: String { "invalid configuration: \(key): \(reason)" }
}
