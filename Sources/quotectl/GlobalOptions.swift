import ArgumentParser
import Foundation
import QuoteClient
import QuoteWire
import ZeroMQ

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "quoted's command endpoint, or several daemons' comma-separated; $QUOTED_ENDPOINT when set.")
    var endpoint: String = ProcessInfo.processInfo.environment["QUOTED_ENDPOINT"] ?? "tcp://127.0.0.1:5555"

    @Option(help: "quoted's event endpoint, or several daemons' comma-separated; $QUOTED_EVENTS when set.")
    var events: String = ProcessInfo.processInfo.environment["QUOTED_EVENTS"] ?? "tcp://127.0.0.1:5556"

    @Option(help: "Your secret CURVE certificate (NAME.key_secret), for a quoted with security; $QUOTED_KEY when set.")
    var key: String?

    @Option(
        name: .customLong("server-key"), help: "quoted's public certificate (quoted.key); $QUOTED_SERVER_KEY when set.")
    var serverKey: String?

    /// `--key`, else `$QUOTED_KEY`.
    var keyFile: String? { key ?? ProcessInfo.processInfo.environment["QUOTED_KEY"] }
    /// `--server-key`, else `$QUOTED_SERVER_KEY`.
    var serverKeyFile: String? { serverKey ?? ProcessInfo.processInfo.environment["QUOTED_SERVER_KEY"] }

    @Option(help: "Seconds to wait for each reply.")
    var timeout: Double = 5

    @Flag(help: "Print quoted's replies as JSON, one object per line.")
    var json = false

    func validate() throws {
        guard timeout > 0 && timeout <= 3_600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        if (keyFile == nil) != (serverKeyFile == nil) {
            throw ValidationError("--key and --server-key go together (or QUOTED_KEY and QUOTED_SERVER_KEY)")
        }
    }

    /// The CURVE keys to connect with, when given.
    func curve() throws(QuotedError) -> CurveCredentials? {
        guard let key = keyFile, let serverKey = serverKeyFile else { return nil }
        return try CurveCredentials(keyFile: key, serverKeyFile: serverKey)
    }

    var replyTimeout: Duration { .milliseconds(Int64(timeout * 1_000)) }

    /// Runs `body` with a ZeroMQ context; prints failures in words and exits with the
    /// documented status (1 refused, 64 usage, 69 unreachable, 70 internal).
    func session(_ body: (Context, inout Output) throws(QuotedError) -> Void) throws {
        var output = Output(json: json)
        do throws(QuotedError) {
            let context: Context
            do { context = try Context() } catch { throw QuotedError(.internal, "cannot start ZeroMQ: \(error)") }
            try body(context, &output)
        } catch {
            output.failure(error)
            throw ExitCode(error.code.exitStatus)
        }
    }

    /// Runs `body` with a client of the command endpoint; with `oneDaemon`, of the first
    /// of several (for a command whose replies describe the daemon that answers).
    func run(oneDaemon: Bool = false, _ body: (borrowing CommandClient, inout Output) throws(QuotedError) -> Void)
        throws
    {
        let endpoint = oneDaemon ? (CommandClient.endpoints(endpoint).first ?? endpoint) : endpoint
        try session { (context, output) throws(QuotedError) in
            let client = try CommandClient(
                context: context, endpoint: endpoint, timeout: replyTimeout, curve: try curve())
            try body(client, &output)
        }
    }

    /// Runs `body` with the library's async client (`Quoted`) of the command endpoints; a
    /// safe request is sent again up to `retries` times when no reply comes. Prints failures
    /// in words and exits with the documented status, as ``session(_:)`` does.
    func withQuoted(retries: Int = 0, _ body: (Quoted, inout Output) async throws(QuotedError) -> Void) async throws {
        var output = Output(json: json)
        do throws(QuotedError) {
            let configuration = Quoted.Configuration(
                endpoints: CommandClient.endpoints(endpoint), events: CommandClient.endpoints(events),
                timeout: replyTimeout, retries: retries, curve: try curve())
            let quoted = try Quoted(configuration)
            try await body(quoted, &output)
        } catch {
            output.failure(error)
            throw ExitCode(error.code.exitStatus)
        }
    }

    /// Sends `request` and shows its reply: as JSON with `--json`, otherwise as `render` draws
    /// its answer; a refusal or a timeout is reported and sets the exit status.
    func show(_ request: Request, _ render: (Reply, inout Output) throws(QuotedError) -> Void) async throws {
        try await withQuoted { (quoted, output) throws(QuotedError) in
            let reply = try await quoted.checked(request)
            if output.json { return output.reply(reply) }
            try render(try reply.answer(to: request), &output)
        }
    }

    /// Sends a request about one quote and shows the quote it returns: as JSON, or as the
    /// quote view (with its history when the reply has one, and its receipt with `receipt`).
    func showQuote(_ request: Request, receipt: Bool = false) async throws {
        try await show(request) { answer, output in
            let quote: WireQuote
            switch answer {
            case .quote(let shown, let history):
                quote = shown
                output.quote(quote, history: history)
            case .change(let change):
                quote = change.quote
                output.quote(quote, history: nil)
            default:
                return
            }
            if receipt, let details = quote.receipt { output.receipt(details) }
        }
    }
}

extension Quoted {
    /// Sends `request` and returns its reply, a refusal or a timeout thrown as the CLI's
    /// ``QuotedError``; with `retry`, sent again as the configuration allows (reads, and a
    /// submit with its idempotency key).
    func checked(_ request: Request, retry: Bool = false) async throws(QuotedError) -> WireReply {
        try await send(request, retry: retry)
    }
}
