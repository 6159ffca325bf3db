import ArgumentParser
import QuoteClient
import QuoteCore
import QuoteWire
import ZeroMQ

/// `quotectl watch`: every state change and mechanic change, live, in order, none missed.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch quote and mechanic events as they happen.",
        discussion: """
            Prints one line per event: time, seq, quote, from -> to, price, mechanic, message. Events arrive in \
            seq order with none missing and none repeated: a gap in the live stream (a slow terminal, a \
            reconnect) is filled from quoted's event log before printing on. With --since, history after that \
            seq is printed first, then live events follow. Filters (--state, --quote, --type) choose what is \
            printed; the ordering guarantee holds regardless. Notices (reconnects, replays) go to stderr.
            """
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case quote, mechanic
    }

    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("state"), help: "Only quote events into this state (repeat for several).")
    var states: [String] = []
    @Option(help: "Only events of this quote.") var quote: Int64?
    @Option(help: "Only quote or only mechanic events.") var type: Kind?
    @Option(help: "Replay history after this seq first (0: everything retained).") var since: Int64?
    @Option(help: "Exit after printing this many events.") var count: Int?

    @Option(help: .hidden) var receiveHwm: Int32?
    @Option(help: .hidden) var debugDelayMs: Int?
    @Option(help: .hidden) var idleCheckMs: Int?
    @Option(help: .hidden) var receiveBuffer: Int32?
    @Option(help: .hidden) var debugDropEvery: Int64?

    func validate() throws {
        for state in states where QuoteStatus(rawValue: state) == nil {
            throw ValidationError(
                "unknown state \"\(state)\"; use one of \(QuoteStatus.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if let since, since < 0 { throw ValidationError("--since must be 0 or more") }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
    }

    /// Whether the filters let `event` through.
    func wants(_ event: WireEvent) -> Bool {
        if let quote, event.quoteId != quote { return false }
        let isMechanic = event.type.hasPrefix("mechanic.") || event.type.hasPrefix("catalog.")
        if let type, type == .mechanic ? !isMechanic : isMechanic { return false }
        if !states.isEmpty {
            // A reassignment's `to` names a mechanic: the state it left the quote in is its quote's.
            let state = event.type == "quote.reassigned" ? event.quote?.state : event.to
            guard !isMechanic, let state, states.contains(state) else { return false }
        }
        return true
    }

    func run() throws {
        var options = EventFollower.Options()
        if let receiveHwm { options.receiveHighWaterMark = receiveHwm }
        if let debugDelayMs { options.delayPerEvent = .milliseconds(debugDelayMs) }
        if let idleCheckMs { options.idleCheck = .milliseconds(idleCheckMs) }
        options.receiveBuffer = receiveBuffer
        options.dropEvery = debugDropEvery
        let events = global.events
        let json = global.json
        let endpoint = global.endpoint
        let timeout = global.replyTimeout
        let global = global
        try global.session { (context, output) throws(QuotedError) in
            let curve = try global.curve()
            let commands = try CommandClient(context: context, endpoint: endpoint, timeout: timeout, curve: curve)
            var follower = try EventFollower(
                context: context, client: commands, events: events, since: since, curve: curve, options: options)
            var printed = 0
            var connectedOnce = false
            try follower.run(
                deliver: { event in
                    guard wants(event) else { return true }
                    if json { output.event(event) } else { output.watchLine(event) }
                    printed += 1
                    return count.map { printed < $0 } ?? true
                },
                notice: { notice in
                    switch notice {
                    case .following(let after):
                        output.errorLine("quotectl: watching \(events) after event #\(after)")
                    case .connected(let endpoint):
                        if connectedOnce { output.errorLine("quotectl: reconnected to \(endpoint)") }
                        connectedOnce = true
                    case .disconnected(let endpoint):
                        output.errorLine("quotectl: lost \(endpoint); reconnecting...")
                    case .refused(let endpoint, let retry):
                        output.errorLine(
                            "quotectl: \(endpoint) refused this client (is its key in quoted's clients directory?); trying again in \(retry.components.seconds) s"
                        )
                    case .replaying(let from, let to):
                        output.errorLine("quotectl: missed events #\(from)-#\(to) live; replaying them")
                    case .pruned(let from, let to):
                        output.errorLine("quotectl: events #\(from)-#\(to) are no longer in quoted's log (retention)")
                    }
                })
        }
    }
}
