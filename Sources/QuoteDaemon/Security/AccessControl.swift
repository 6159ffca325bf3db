import Foundation
public import Logging
import QuoteCore
public import QuoteWire
import Synchronization
public import ZeroMQ

/// Who may connect to quoted, and as what: the daemon's CURVE key pair, and the allow-list of
/// client certificates (one public `zcert` file per client in the clients directory, its
/// role in `metadata`), re-read on SIGHUP.
///
/// Both sockets are CURVE servers whose handshakes libzmq hands to a ZAP handler
/// (``authenticate(_:limit:)``): a listed key connects to the commands socket, and to the events
/// socket if its role may subscribe; any other peer never completes its handshake. A request
/// then names its key (`User-Id`), looked up again in the current list
/// (``principal(userId:)``), so a key withdrawn on reload is refused on its next request.
public final class AccessControl: CallerDirectory {
    /// A client as the allow-list knows it.
    public struct Principal: Sendable, Hashable {
        /// The public key, as Z85 text: what ZAP names the connection by.
        public let key: String
        /// The certificate's `name`, or its key without one: what the audit trail records.
        /// Several keys may share a name (a client's old and new key while it rotates), and
        /// then own the same quotes.
        public let name: String
        /// What the client may do.
        public let role: Role
    }

    /// What a reload changed.
    public struct Change: Sendable, Hashable {
        /// Keys now listed that were not, or with another name or role.
        public var added: Int
        /// Keys no longer listed, or listed with another name or role.
        public var removed: Int
        /// Files skipped, each with why: no one gains access through them.
        public var skipped: [String] = []
    }

    /// The ZAP domain of the commands socket.
    public static let commandsDomain = "quoted.commands"
    /// The ZAP domain of the events socket.
    public static let eventsDomain = "quoted.events"

    /// The daemon's key pair, from its secret certificate.
    public let serverKeys: CurveKeyPair
    /// The allow-list's directory.
    public let clientsDirectory: String
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var principals: [String: Principal]
        /// A subscriber's key lost its access since the events socket last dropped its
        /// connections: it must drop them again, for its peers to authenticate anew.
        var subscriberRevoked = false
        /// Refused handshakes logged one by one in the current window, and those only counted.
        var refusals = RefusalLog()
    }

    /// A global budget for refused-handshake warnings: a peer trying many keys, or many peers,
    /// must not flood the journal. The first ``burst`` refusals of each ``window`` are logged
    /// one by one; the rest are counted and summed up in one line when the window ends.
    struct RefusalLog {
        static let burst = 10
        static let window = Duration.seconds(60)
        var started = ContinuousClock.now
        var logged = 0
        var suppressed = 0

        /// Counts a refusal at `now`: whether to log it, and the summary of a window that ended.
        mutating func record(at now: ContinuousClock.Instant) -> (log: Bool, summary: Int?) {
            let summary = roll(at: now)
            guard logged < Self.burst else {
                suppressed += 1
                return (false, summary)
            }
            logged += 1
            return (true, summary)
        }

        /// Ends the window if it is over: how many refusals went unlogged in it, if any.
        mutating func roll(at now: ContinuousClock.Instant) -> Int? {
            guard now - started >= Self.window else { return nil }
            let summary = suppressed > 0 ? suppressed : nil
            started = now
            logged = 0
            suppressed = 0
            return summary
        }
    }

    /// Reads the server's secret certificate and the clients directory; throws naming the
    /// configuration key and the file at fault.
    public init(serverKeyFile: String, clientsDirectory: String, logger: Logger) throws(ConfigurationError) {
        let certificate: Certificate
        do {
            certificate = try Certificate.load(serverKeyFile)
        } catch {
            throw ConfigurationError(key: "security.serverKey", reason: error.message)
        }
        guard let keys = certificate.keyPair else {
            throw ConfigurationError(
                key: "security.serverKey",
                reason: "\(serverKeyFile) has no secret-key; give the secret certificate (NAME.key_secret)")
        }
        serverKeys = keys
        if let mode = (try? FileManager.default.attributesOfItem(atPath: serverKeyFile))?[.posixPermissions] as? Int,
            mode & 0o077 != 0
        {
            logger.warning(
                "the server's secret key is readable by others; chmod 600 it",
                metadata: ["file": "\(serverKeyFile)", "mode": "\(String(mode, radix: 8))"])
        }
        self.clientsDirectory = clientsDirectory
        self.logger = logger
        state = Mutex(State(principals: try Self.load(clientsDirectory).get()))
    }

    /// Every listed key.
    public var principals: [Principal] {
        state.withLock { Array($0.principals.values) }.sorted { ($0.name, $0.key) < ($1.name, $1.key) }
    }

    /// Reads the clients directory again and puts it in force, failing closed: a key no
    /// longer listed (or whose file can no longer be read) is refused from its next request,
    /// and its subscriptions are dropped. A file that cannot be used is skipped and named in
    /// ``Change/skipped``, and no one gains access through it; the other files apply. A
    /// directory that cannot be read at all lets no one in until it can.
    @discardableResult
    public func reload() -> Change {
        let (next, problems) = Self.load(clientsDirectory, skippingBadFiles: true)
        for problem in problems {
            logger.error("clients: file skipped, no access through it", metadata: ["problem": "\(problem.reason)"])
        }
        return state.withLock { state in
            let removed = state.principals.filter { next[$0.key] != $0.value }
            let added = next.filter { state.principals[$0.key] != $0.value }
            if removed.values.contains(where: { $0.role.maySubscribe }) { state.subscriberRevoked = true }
            state.principals = next
            return Change(added: added.count, removed: removed.count, skipped: problems.map(\.reason))
        }
    }

    /// Logs how many refused handshakes went unlogged in a window that has ended (called
    /// by the I/O loop each turn, so the count comes even when refusals stop).
    func summarizeRefusals(at now: ContinuousClock.Instant = .now) {
        let summary = state.withLock { $0.refusals.roll(at: now) }
        if let summary { logSummary(summary) }
    }

    private func logSummary(_ count: Int) {
        logger.warning(
            "connections refused: \(count) more in the last \(RefusalLog.window) not logged one by one",
            metadata: ["refused": "\(count)"])
    }

    /// The listed client whose connection ZAP named `userId`; `nil` for one not listed (any
    /// more).
    public func principal(userId: String?) -> Principal? {
        guard let userId else { return nil }
        return state.withLock { $0.principals[userId] }
    }

    /// The listed client whose connection ZAP named `userId`, as the request decoder
    /// authorizes it.
    public func caller(userId: String?) -> Caller? {
        principal(userId: userId).map { Caller(name: $0.name, role: $0.role) }
    }

    /// Whether the events socket must drop its connections, and forgets it: a subscriber's
    /// key was withdrawn by a reload.
    func takeSubscriberRevocation() -> Bool {
        state.withLock { state in
            defer { state.subscriberRevoked = false }
            return state.subscriberRevoked
        }
    }

    /// The ZAP handler's answer: `200` with the client's key as `User-Id` for a CURVE peer
    /// whose key is listed (with a role that may subscribe, on the events socket); `400`
    /// for anyone else, and for everyone whose connection passes a connection `limit`.
    func authenticate(_ request: ZAP.Request, limit: ConnectionCount.Limit? = nil) -> [[UInt8]] {
        guard request.mechanism == "CURVE", let credential = request.credentials.first, credential.count == 32,
            let key = try? Z85.encode(credential)
        else {
            let (log, summary) = state.withLock { $0.refusals.record(at: .now) }
            if let summary { logSummary(summary) }
            if log { warn(request.address, request, key: nil, "not a CURVE client") }
            return request.reply(status: 400, text: "CURVE required")
        }
        // Decided under the lock; logged and answered after it.
        let decision = state.withLock { state -> Decision in
            let refusal: (log: String, reply: String)
            if limit == .total {
                refusal = ("the connection limit (maxConnections) is reached", "too many connections")
            } else if limit == .perAddress {
                refusal = (
                    "the connection limit of its address (maxConnectionsPerAddress) is reached",
                    "too many connections from this address"
                )
            } else if let principal = state.principals[key] {
                guard request.domain == Self.eventsDomain && !principal.role.maySubscribe else {
                    return .allowed(principal)
                }
                refusal = (
                    "role \(principal.role) may not subscribe to events", "role \(principal.role) may not subscribe"
                )
            } else {
                refusal = ("key not in the clients directory", "key not allowed")
            }
            let (log, summary) = state.refusals.record(at: .now)
            return .refused(log: log ? refusal.log : nil, summary: summary, reply: refusal.reply)
        }
        switch decision {
        case .refused(let log, let summary, let reply):
            if let summary { logSummary(summary) }
            if let log { warn(request.address, request, key: key, log) }
            return request.reply(status: 400, text: reply)
        case .allowed(let principal):
            logger.debug(
                "client authenticated",
                metadata: [
                    "client": "\(principal.name)", "role": "\(principal.role)", "address": "\(request.address)",
                    "domain": "\(request.domain)",
                ])
            return request.reply(status: 200, text: "OK", userId: key)
        }
    }

    /// What the handler answers a handshake.
    private enum Decision {
        case allowed(Principal)
        /// Refused, with what to log (`nil` past the window's budget), and the count of a
        /// window that just ended.
        case refused(log: String?, summary: Int?, reply: String)
    }

    private func warn(_ address: String, _ request: ZAP.Request, key: String?, _ reason: String) {
        logger.warning(
            "connection refused: \(reason)",
            metadata: [
                "address": "\(address)", "key": "\(key ?? "-")", "mechanism": "\(request.mechanism)",
                "domain": "\(request.domain)",
            ])
    }

    /// Reads every public certificate (`*.key`) in `directory`: each needs a known `role` in
    /// its metadata; a key listed twice is an error. Fails on the first problem.
    static func load(_ directory: String) -> Result<[String: Principal], ConfigurationError> {
        let (principals, problems) = load(directory, skippingBadFiles: false)
        if let first = problems.first { return .failure(first) }
        return .success(principals)
    }

    /// Reads `directory` as ``load(_:)`` does; with `skippingBadFiles`, goes on past a file
    /// that cannot be used (and past a key listed twice, keeping neither copy), returning
    /// the problems beside the keys that are fine.
    static func load(
        _ directory: String, skippingBadFiles: Bool
    ) -> (principals: [String: Principal], problems: [ConfigurationError]) {
        let key = "security.clientsDirectory"
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".key") }
                .sorted()
        } catch {
            return (
                [:],
                [
                    ConfigurationError(
                        key: key, reason: "cannot read the directory \(directory): \(error.localizedDescription)")
                ]
            )
        }
        var principals: [String: Principal] = [:]
        var problems: [ConfigurationError] = []
        /// Keys found twice: kept by neither file, since which one is meant is unknown.
        var duplicated: Set<String> = []
        for file in files {
            if !skippingBadFiles, !problems.isEmpty { break }
            let path = (directory as NSString).appendingPathComponent(file)
            let certificate: Certificate
            let z85: String
            do {
                certificate = try Certificate.load(path)
                z85 = try Z85.encode(certificate.publicKey)
            } catch let error as CertificateError {
                problems.append(ConfigurationError(key: key, reason: error.message))
                continue
            } catch {
                problems.append(ConfigurationError(key: key, reason: "\(path): \(error)"))
                continue
            }
            guard let roleName = certificate.metadata["role"] else {
                problems.append(
                    ConfigurationError(
                        key: key,
                        reason:
                            "\(path) names no role; add role = \"\(Role.client)\" (or \(Role.allCases.map(\.rawValue).joined(separator: ", "))) to its metadata"
                    ))
                continue
            }
            guard let role = Role(rawValue: roleName) else {
                problems.append(
                    ConfigurationError(
                        key: key,
                        reason:
                            "\(path) has the unknown role \"\(roleName)\"; use one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))"
                    ))
                continue
            }
            if duplicated.contains(z85) || principals[z85] != nil {
                let other = principals.removeValue(forKey: z85)
                duplicated.insert(z85)
                problems.append(
                    ConfigurationError(
                        key: key, reason: "\(path) lists the key of \(other?.name ?? "another file") again"))
                continue
            }
            let name = certificate.metadata["name"].flatMap { $0.isEmpty ? nil : $0 } ?? z85
            // The name goes into the audit trail (`submittedBy`, `by`) and the logs: text
            // like any other.
            if let scalar = TextHygiene.firstForbidden(in: name) {
                problems.append(
                    ConfigurationError(
                        key: key, reason: "\(path) has a name with the control character \(TextHygiene.name(scalar))"))
                continue
            }
            if name.isBlank || name.unicodeScalars.count > QuoteLimits.maximumTextLength {
                problems.append(
                    ConfigurationError(
                        key: key,
                        reason:
                            "\(path) has a blank name or one longer than \(QuoteLimits.maximumTextLength) characters"))
                continue
            }
            principals[z85] = Principal(key: z85, name: name, role: role)
        }
        return (principals, problems)
    }
}
