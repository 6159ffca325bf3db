import Foundation
public import QuoteWire
public import ZeroMQ

/// A synchronous client of quoted's command socket: one DEALER, one request at a time, a
/// deadline on every reply. Owned by one thread, like its socket.
///
/// No call blocks past its deadline, whatever the peer does: requests are queued without
/// waiting, and a socket whose connections libzmq dropped for good (it does not reconnect
/// after a failed handshake: no keys, or keys quoted does not list yet, or quoted full) is
/// replaced by a fresh one, so a long-lived client recovers once quoted accepts it.
public struct CommandClient: ~Copyable {
    private let connection: Connection
    private let codec = WireCodec()
    /// The endpoint it talks to, for messages.
    public let endpoint: String
    /// How long to wait for each reply.
    public let timeout: Duration
    /// Whether it connects with CURVE keys.
    private let usesCurve: Bool

    /// Connects (in the background) to `endpoint`, with `curve` when quoted requires it.
    public init(
        context: Context, endpoint: String, timeout: Duration, curve: CurveCredentials? = nil
    ) throws(QuotedError) {
        do {
            connection = try Connection(context: context, endpoints: Self.endpoints(endpoint), curve: curve)
        } catch {
            throw QuotedError(.usage, "cannot use endpoint \(endpoint): \(error.message)")
        }
        self.endpoint = endpoint
        self.timeout = min(max(timeout, .milliseconds(1)), Self.longestTimeout)
        usesCurve = curve != nil
    }

    /// The longest wait for a reply: a day (longer timeouts are cut to it).
    public static let longestTimeout = Duration.seconds(86_400)

    /// The endpoints in `list`, comma-separated: one per daemon sharing a database. ZeroMQ
    /// spreads requests over them and subscribes to each.
    public static func endpoints(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// What may be wrong when quoted does not answer: a quoted with `security` lets a client
    /// without keys, or with keys it does not list, complete no handshake, and says nothing.
    private var hint: String {
        usesCurve
            ? "is quoted running, is this its server key, and is this client's public key in its clients directory?"
            : "is quoted running? (One with security answers CURVE clients only: give --key and --server-key.)"
    }

    /// Sends `request` and waits for its reply, or fails with ``QuotedError/Code/timedOut``.
    /// After a timeout it is sent again, under the same id, up to `retries` more times (safe
    /// for reads, and for a submit with an idempotency key, which quoted answers once whatever
    /// the repeats): a reply to any of the attempts is the answer. No attempt starts, or goes
    /// on, past `deadline`, when one is given.
    public func call(
        _ request: Request, retries: Int = 0, deadline: ContinuousClock.Instant? = nil
    ) throws(QuotedError) -> WireReply {
        let id = RequestID.string(UUID().uuidString)
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(request.frame(id: id)))
        } catch {
            throw QuotedError(.internal, "cannot encode the request: \(error)")
        }
        let clock = ContinuousClock()
        let attempts = min(max(0, retries), 1_000) + 1
        var made = 0
        do {
            while made < attempts {
                if let deadline, clock.now >= deadline { break }
                if made > 0 && !connection.isWritable() {
                    // Nowhere to queue the next attempt: libzmq dropped the connection for
                    // good after the last one was queued. (Otherwise the socket stays, so a
                    // late reply to an earlier attempt still arrives.)
                    try connection.reopen()
                }
                var ends = clock.now + timeout
                if let deadline { ends = min(ends, deadline) }
                made += 1
                if let reply = try attempt(body, id: id, until: ends) { return reply }
            }
            // Unanswered: what the socket still holds unsent is dropped, and the next request
            // goes out on a fresh connection, in case this one is gone for good.
            try connection.reopen()
        } catch let error as QuotedError {
            throw error
        } catch {
            throw QuotedError(.timedOut, "cannot talk to quoted at \(endpoint): \(error); is quoted running?")
        }
        let waited =
            made < attempts
            ? "in the time it had (\(made) of \(attempts) attempts)"
            : "within \(timeout.formatted(.units(allowed: [.seconds, .milliseconds])))\(attempts > 1 ? " (\(attempts) attempts)" : "")"
        throw QuotedError(.timedOut, "no reply from quoted at \(endpoint) \(waited); \(hint)")
    }

    /// Sends `body` once and waits until `deadline` for the reply to `id`; `nil` when none came.
    private func attempt(_ body: [UInt8], id: RequestID, until deadline: ContinuousClock.Instant) throws -> WireReply? {
        let clock = ContinuousClock()
        // Queued without waiting, or not at all. With one endpoint the request is queued even
        // before the connection is made, so a socket that cannot queue it lost its connection
        // for good: it is replaced. With several, it waits, below, for one to connect.
        var queued = try connection.socket.send(multipart: [[], body], dontWait: true)
        if !queued && connection.endpoints.count == 1 {
            try connection.reopen()
            queued = try connection.socket.send(multipart: [[], body], dontWait: true)
        }
        while true {
            var poller = Poller()
            poller.register(connection.socket, for: queued ? .readable : [.readable, .writable])
            let remaining = deadline - clock.now
            guard remaining > .zero else { return nil }
            // Zero: the deadline passed, or a signal cut the wait short; the loop tells which.
            guard try poller.poll(timeout: max(remaining, .milliseconds(1))) > 0 else { continue }
            if !queued {
                queued = try connection.socket.send(multipart: [[], body], dontWait: true)
            }
            while let message = try connection.socket.receiveMultipart(dontWait: true) {
                guard let frame = message.frames.last else { continue }
                let reply: WireReply
                do {
                    reply = try codec.decode(WireReply.self, from: frame)
                } catch {
                    throw QuotedError(.internal, "quoted sent a reply that cannot be read: \(error)")
                }
                // A late reply to an earlier, timed-out request is not ours (one to an earlier
                // attempt of this one is).
                if reply.id == nil || reply.id == id { return reply }
            }
        }
    }

    /// Like ``call(_:retries:deadline:)``, but a refusal (`ok: false`) is thrown as
    /// ``QuotedError/Code/refused``.
    public func checked(
        _ request: Request, retries: Int = 0, deadline: ContinuousClock.Instant? = nil
    ) throws(QuotedError) -> WireReply {
        let reply = try call(request, retries: retries, deadline: deadline)
        guard reply.ok else {
            throw QuotedError(refusal: reply.error ?? WireError(code: .init(rawValue: "unknown"), message: "refused"))
        }
        return reply
    }

    /// Sends `request` and returns its answer, read for its operation: a refusal is thrown,
    /// as is a reply without what that operation answers with.
    public func answer(_ request: Request, retries: Int = 0) throws(QuotedError) -> Reply {
        try checked(request, retries: retries).answer(to: request)
    }
}

/// The DEALER a ``CommandClient`` talks through, replaced by a fresh one when libzmq has
/// dropped its connections for good. Owned by the client's thread.
private final class Connection {
    private(set) var socket: Socket
    private let context: Context
    let endpoints: [String]
    private let curve: CurveCredentials?

    init(context: Context, endpoints: [String], curve: CurveCredentials?) throws(ZeroMQError) {
        self.context = context
        self.endpoints = endpoints
        self.curve = curve
        socket = try Self.open(context, endpoints, curve)
    }

    /// Whether a request can be queued now: with one endpoint, whether its connection is
    /// still there (libzmq did not drop it for good); with several, whether one is connected.
    func isWritable() -> Bool {
        var poller = Poller()
        poller.register(socket, for: .writable)
        return ((try? poller.poll(timeout: .zero)) ?? 0) > 0
    }

    /// Closes the socket (what it still held unsent is dropped) and connects a new one.
    func reopen() throws(ZeroMQError) {
        socket = try Self.open(context, endpoints, curve)
    }

    private static func open(
        _ context: Context, _ endpoints: [String], _ curve: CurveCredentials?
    ) throws(ZeroMQError) -> Socket {
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 0)
        try curve?.configure(socket)
        // Several daemons: requests go only to those connected, so a daemon that is down
        // holds none of them. (With one endpoint a request is queued for the connection to
        // come.)
        if endpoints.count > 1 { try socket.set(.immediate, true) }
        for one in endpoints { try socket.connect(one) }
        return socket
    }
}
