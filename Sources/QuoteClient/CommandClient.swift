import Foundation
public import QuoteWire
public import ZeroMQ

/// A synchronous client of quoted's command socket: one DEALER, one request at a time, a
/// deadline on every reply. Owned by one thread, like its socket.
public struct CommandClient: ~Copyable {
    private let socket: Socket
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
            let socket = try Socket(context, type: .dealer)
            try socket.set(.linger, 0)
            try curve?.configure(socket)
            let endpoints = Self.endpoints(endpoint)
            // Several daemons: requests go only to those connected, so a daemon that is down
            // holds none of them. (With one endpoint a request is queued for the connection
            // to come.)
            if endpoints.count > 1 { try socket.set(.immediate, true) }
            // A send that finds nowhere to queue its request (every daemon down, or the one
            // daemon's connection dropped for good, as libzmq drops one whose handshake failed:
            // no keys against a quoted with security) fails by the reply's deadline instead of
            // blocking the caller for good.
            let (seconds, attoseconds) = timeout.components
            let milliseconds = max(1, min(seconds, 86_400) * 1_000 + attoseconds / 1_000_000_000_000_000)
            try socket.set(.sendTimeout, Int32(milliseconds))
            for one in endpoints { try socket.connect(one) }
            self.socket = socket
        } catch {
            throw QuotedError(.usage, "cannot use endpoint \(endpoint): \(error.message)")
        }
        self.endpoint = endpoint
        self.timeout = timeout
        usesCurve = curve != nil
    }

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
    /// the repeats): a reply to any of the attempts is the answer.
    public func call(_ request: Request, retries: Int = 0) throws(QuotedError) -> WireReply {
        let id = RequestID.string(UUID().uuidString)
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(request.frame(id: id)))
        } catch {
            throw QuotedError(.internal, "cannot encode the request: \(error)")
        }
        // Whether an attempt was queued: a send that finds no connection to queue it for (every
        // daemon down, with several endpoints) times out, which counts as an attempt unanswered.
        func send() throws(ZeroMQError) -> Bool {
            do {
                try socket.send(multipart: [[], body])
                return true
            } catch  where error.code == .timeout {
                return false
            }
        }
        do {
            var queued = try send()
            var poller = Poller()
            poller.register(socket)
            let clock = ContinuousClock()
            var deadline = clock.now + timeout
            var attemptsLeft = max(0, retries)
            while true {
                let remaining = deadline - clock.now
                guard queued, remaining > .zero, try poller.poll(timeout: remaining) > 0 else {
                    if attemptsLeft > 0 {
                        attemptsLeft -= 1
                        queued = try send()
                        deadline = clock.now + timeout
                        continue
                    }
                    let attempts = max(0, retries) + 1
                    throw QuotedError(
                        .timedOut,
                        "no reply from quoted at \(endpoint) within \(timeout.formatted(.units(allowed: [.seconds, .milliseconds])))\(attempts > 1 ? " (\(attempts) attempts)" : ""); \(hint)"
                    )
                }
                guard let message = try socket.receiveMultipart(dontWait: true), let frame = message.frames.last else {
                    continue
                }
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
        } catch let error as QuotedError {
            throw error
        } catch {
            throw QuotedError(.timedOut, "cannot talk to quoted at \(endpoint): \(error); is quoted running?")
        }
    }

    /// Like ``call(_:retries:)``, but a refusal (`ok: false`) is thrown as
    /// ``QuotedError/Code/refused``.
    public func checked(_ request: Request, retries: Int = 0) throws(QuotedError) -> WireReply {
        let reply = try call(request, retries: retries)
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
