import ArgumentParser
import Foundation
import QuoteClient
import QuoteWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGINT or SIGTERM while `top` holds the terminal, so that it gives it back.
private let interrupted = Atomic<Bool>(false)

/// `quotectl top`: a full-screen live view of one daemon, refreshed every second, over the
/// command socket's `stats` (no HTTP needed).
struct Top: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch quoted live: requests/s, latency, errors, quotes, mechanics, events (q quits).",
        discussion: """
            Rates and percentiles are over each refresh interval, for the daemon at --endpoint \
            (the first, when several are given: each daemon counts the requests it answers). --once prints one frame, with \
            rates over one interval, and exits; --json prints one JSON object per refresh \
            (with --once, one). Colour follows NO_COLOR.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print one frame (rates over one interval) and exit.")
    var once = false

    @Option(help: "Seconds between refreshes.")
    var interval: Double = 1

    func validate() throws {
        guard interval >= 0.1 && interval <= 3_600 else {
            throw ValidationError("--interval must be between 0.1 and 3600 seconds")
        }
        if !once && !global.json && !Terminal.isInteractive {
            throw ValidationError("top needs a terminal; use --once for one frame or --json for a stream")
        }
    }

    private var period: Duration { .milliseconds(Int64(interval * 1_000)) }

    func run() throws {
        // Each daemon counts its own requests: with several endpoints, the first is watched.
        try global.run(oneDaemon: true) { (client, output) throws(QuotedError) in
            if once || global.json {
                try stream(client, output)
            } else {
                live(client, output)
            }
        }
    }

    /// The daemon's `stats`.
    private static func stats(_ client: borrowing CommandClient) throws(QuotedError) -> Reply.Stats {
        guard case .stats(let stats) = try client.answer(.stats) else {
            throw QuotedError.unexpectedReply(to: .stats)
        }
        return stats
    }

    /// `--once` and `--json`: frames or JSON objects on standard output, no screen control.
    private func stream(_ client: borrowing CommandClient, _ output: Output) throws(QuotedError) {
        var earlier = try Self.stats(client).activity
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        while !interrupted.load(ordering: .relaxed) {
            Thread.sleep(forTimeInterval: interval)
            let stats = try Self.stats(client)
            let figures = TopFigures(endpoint: client.endpoint, earlier: earlier, later: stats)
            earlier = stats.activity
            if global.json {
                let data = (try? encoder.encode(figures)) ?? Data("{}".utf8)
                output.line(String(decoding: data, as: UTF8.self))
            } else {
                let width = Terminal.isInteractive ? Terminal.columns : 100
                for line in TopScreen(colour: output.colour).lines(figures, width: width) { output.line(line) }
            }
            if once { return }
        }
    }

    /// The full-screen view, until `q`, Ctrl-C or SIGTERM. quoted not answering shows on
    /// screen; the view keeps trying.
    private func live(_ client: borrowing CommandClient, _ output: Output) {
        signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in interrupted.store(true, ordering: .relaxed) }
        let terminal = Terminal()
        defer { terminal.restore() }
        let screen = TopScreen(colour: output.colour)
        let clock = ContinuousClock()
        var earlier: WireReply.Activity?
        var figures: TopFigures?
        var problem: String?
        var size = terminal.size
        var clear = true
        var next = clock.now
        while !interrupted.load(ordering: .relaxed) {
            if clock.now >= next {
                next = clock.now + period
                do {
                    let stats = try Self.stats(client)
                    // The first frame shows rates since the daemon started, the rest per interval.
                    figures = TopFigures(endpoint: client.endpoint, earlier: earlier, later: stats)
                    earlier = stats.activity
                    problem = nil
                } catch {
                    problem = error.message
                }
                terminal.draw(
                    screen.lines(figures, width: size.columns, problem: problem), rows: size.rows, clear: clear)
                clear = false
            }
            let key = terminal.key(within: min(.milliseconds(100), max(.zero, next - clock.now)))
            if key == UInt8(ascii: "q") || key == UInt8(ascii: "Q") { return }
            let now = terminal.size
            if now != size {
                size = now
                terminal.draw(
                    screen.lines(figures, width: size.columns, problem: problem), rows: size.rows, clear: true)
            }
        }
    }
}
