import Foundation
import QuoteCore
public import QuoteWire

/// An async client of quoted, for Swift integrators: requests over the command socket with a
/// timeout each, retried where that is safe, and a gap-free stream of events.
///
/// ```swift
/// let quoted = try Quoted(.init(endpoints: ["tcp://127.0.0.1:5555"], events: ["tcp://127.0.0.1:5556"]))
/// let submission = try SubmissionBuilder()
///     .customer(name: "John Lee", email: "john.lee@example.com", address: "12 Elm Street")
///     .car(make: "Toyota", model: "Camry", year: 2015, trim: "LE")
///     .service("Oil Change")
///     .book()
///     .build()
/// let quote = try await quoted.submit(submission).quote
/// for try await event in quoted.events(since: 0) { handle(event) }  // seq 1, 2, 3... each once
/// ```
///
/// Reads and submissions (sent with their idempotency key) are retried when no reply comes;
/// `resolve`, `book`, `complete` and `cancel` are not, since a lost reply leaves it unknown
/// whether they were applied: their ``QuotedError/Code/timedOut`` says to read the quote.
/// Requests from one `Quoted` go one at a time, on a thread of its own that owns the socket,
/// each waiting no longer than its own timeout and retries allow, whatever is queued before
/// it (a write sent once waits its timeout to be sent, and its timeout once sent); use
/// several for parallel requests. With several endpoints (daemons sharing one database)
/// requests go to those connected, in turn.
public final class Quoted: Sendable {
    /// Where quoted is and how to talk to it.
    public struct Configuration: Sendable {
        /// Command endpoints: one daemon's, or those of several sharing a database.
        public var endpoints: [String]
        /// Event endpoints, for ``Quoted/events(since:)``: every daemon publishes every event.
        public var events: [String]
        /// How long to wait for each reply.
        public var timeout: Duration
        /// How many times a safe request is sent again after a timeout.
        public var retries: Int
        /// CURVE keys, for a quoted with `security`.
        public var curve: CurveCredentials?

        /// quoted's defaults: `tcp://127.0.0.1:5555` and `:5556`, 5 s, 3 retries, plaintext.
        public init(
            endpoints: [String] = ["tcp://127.0.0.1:5555"], events: [String] = ["tcp://127.0.0.1:5556"],
            timeout: Duration = .seconds(5), retries: Int = 3, curve: CurveCredentials? = nil
        ) {
            self.endpoints = endpoints
            self.events = events
            self.timeout = timeout
            self.retries = retries
            self.curve = curve
        }
    }

    /// What a write came to: the quote as it left it, and whether it was a replay, waits in
    /// line or failed to book.
    public typealias Outcome = Reply.Change

    /// The endpoints, timeout and retries it was made with.
    public let configuration: Configuration
    private let thread: ClientThread

    /// Connects (in the background: a daemon that is not up yet is waited for, up to each
    /// request's timeout).
    public init(_ configuration: Configuration = Configuration()) throws(QuotedError) {
        guard !configuration.endpoints.isEmpty else { throw QuotedError(.usage, "no command endpoint") }
        self.configuration = configuration
        thread = try ClientThread(name: "quoted-client") { (context) throws(QuotedError) in
            try CommandClient(
                context: context, endpoint: configuration.endpoints.joined(separator: ","),
                timeout: configuration.timeout, curve: configuration.curve)
        }
    }

    deinit { thread.stop() }

    // MARK: Writes

    /// Submits a quote; retried with its idempotency key until a reply comes, so it is created
    /// once whatever was lost on the way.
    public func submit(_ submission: QuoteSubmission) async throws(QuotedError) -> Outcome {
        let request = Request.submit(
            submission.submission, idempotencyKey: submission.idempotencyKey, book: submission.booking != .none,
            wait: submission.booking == .bookOrWait)
        return try await change(request, retry: true)
    }

    /// Books a ready quote: with `mechanic`, that one; with `wait`, waits in line when no one
    /// (or not that one) is free.
    public func book(_ quote: Int64, mechanic: String? = nil, wait: Bool = false) async throws(QuotedError)
        -> Outcome
    {
        try await change(.book(quoteId: quote, mechanic: mechanic, wait: wait), retry: false)
    }

    /// Completes a booked quote: the outcome's quote has its receipt.
    public func complete(_ quote: Int64) async throws(QuotedError) -> Outcome {
        try await change(.complete(quoteId: quote), retry: false)
    }

    /// Cancels a quote (any state but completed).
    public func cancel(_ quote: Int64, reason: String? = nil) async throws(QuotedError) -> Outcome {
        try await change(.cancel(quoteId: quote, reason: reason), retry: false)
    }

    // MARK: Reads

    /// A quote, with the states it went through, oldest first.
    public func quote(_ id: Int64) async throws(QuotedError) -> (quote: WireQuote, history: [WireReply.HistoryStep]) {
        let request = Request.get(quoteId: id)
        guard case .quote(let quote, let history) = try await answer(request, retry: true) else {
            throw QuotedError.unexpectedReply(to: request.operation)
        }
        return (quote, history)
    }

    /// Quotes in `state` (all when `nil`) of `customer` (an email address, exact but for case,
    /// or the start of a name; all when `nil`), by increasing id after `after`, at most `limit`.
    public func quotes(
        state: String? = nil, customer: String? = nil, after: Int64? = nil, limit: Int = 100
    ) async throws(QuotedError) -> [WireQuote] {
        let request = Request.list(state: state, customer: customer, after: after, limit: limit)
        guard case .quotes(let quotes, _, _) = try await answer(request, retry: true) else {
            throw QuotedError.unexpectedReply(to: request.operation)
        }
        return quotes
    }

    /// Quotes by state, mechanics busy and free, the log's last `seq`, the daemon's activity.
    public func stats() async throws(QuotedError) -> Reply.Stats {
        guard case .stats(let stats) = try await answer(.stats, retry: true) else {
            throw QuotedError.unexpectedReply(to: .stats)
        }
        return stats
    }

    /// The log's last `seq`; throws when quoted does not answer, or its store is down.
    public func ping() async throws(QuotedError) -> Int64 {
        try await answer(.ping, retry: true).lastSequence()
    }

    /// Sends any request and returns its answer, read for its operation: a refusal is thrown.
    /// Retried after a timeout only with `retry` (safe for reads, and for a submit with an
    /// idempotency key).
    public func answer(_ request: Request, retry: Bool) async throws(QuotedError) -> Reply {
        try await send(request, retry: retry).answer(to: request)
    }

    /// Sends any request and returns its reply: a refusal is thrown. Retried after a timeout
    /// only with `retry` (safe for reads, and for a submit with an idempotency key). A caller
    /// cancelled while its request waits its turn gets ``QuotedError/Code/cancelled``, and the
    /// request is not sent.
    public func send(_ request: Request, retry: Bool) async throws(QuotedError) -> WireReply {
        let retries = retry ? min(max(0, configuration.retries), 100) : 0
        // Requests from one `Quoted` go one at a time: a caller waits no longer than its own
        // attempts would take, however long those queued before it take. A write that is sent
        // once is not sent at all past that time, and once sent gets its whole timeout.
        let timeout = min(max(configuration.timeout, .milliseconds(1)), CommandClient.longestTimeout)
        let allowed = timeout * (retries + 1)
        let deadline = ContinuousClock.now + allowed
        let sentOnce = !retry && request.operation.isWrite
        return try await thread.run { (client) throws(QuotedError) in
            guard ContinuousClock.now < deadline else {
                throw QuotedError(
                    .timedOut,
                    "not sent: the requests before it on this client took the \(allowed.formatted(.units(allowed: [.seconds, .milliseconds]))) it had"
                )
            }
            do throws(QuotedError) {
                return try client.checked(request, retries: retries, deadline: sentOnce ? nil : deadline)
            } catch  where error.code == .timedOut && sentOnce {
                throw QuotedError(
                    .timedOut, "\(error.message); it may or may not have been applied: read the quote to know")
            }
        }
    }

    private func change(_ request: Request, retry: Bool) async throws(QuotedError) -> Outcome {
        guard case .change(let change) = try await answer(request, retry: retry) else {
            throw QuotedError.unexpectedReply(to: request.operation)
        }
        return change
    }
}
