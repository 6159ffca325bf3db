import Foundation
public import QuoteWire
public import ZeroMQ

/// Follows quoted's event stream gap-free: subscribes to the PUB endpoint, replays history
/// through the `events` op, fills every `seq` gap it sees (or suspects, when idle) and never
/// hands the same event out twice. Owns a SUB socket, its monitor and a ``CommandClient``,
/// all on the calling thread.
public struct EventFollower: ~Copyable {
    /// Tuning, mostly for tests that provoke gaps.
    public struct Options: Sendable {
        /// The SUB socket's receive high-water mark; tiny values make libzmq drop events.
        public var receiveHighWaterMark: Int32 = 100_000
        /// The SUB socket's kernel receive buffer in bytes; `nil` for the OS default.
        public var receiveBuffer: Int32?
        /// How long the stream may stay silent before the follower asks for `lastSeq`.
        public var idleCheck: Duration = .milliseconds(500)
        /// A pause after each live event, to simulate a slow watcher (tests only).
        public var delayPerEvent: Duration?
        /// Fault injection for tests: discard the live copy of every event whose seq is a
        /// multiple of this, as if the network had lost it.
        public var dropEvery: Int64?
        /// Events asked for per replay request.
        public var replayPage = 1_000

        /// The defaults.
        public init() {}
    }

    /// Something a person watching should know, beside the events themselves.
    public enum Notice: Sendable, Equatable {
        /// Following has begun: every event after `after` will be delivered.
        case following(after: Int64)
        /// The SUB socket reached the daemon (first time or again).
        case connected(endpoint: String)
        /// The connection dropped; libzmq reconnects by itself.
        case disconnected(endpoint: String)
        /// quoted refused the handshake (it does not list this client's key, or it is full).
        /// libzmq gives up on such a connection; the follower connects again after `retry`.
        case refused(endpoint: String, retry: Duration)
        /// Events in `from...to` were missed live and are being replayed.
        case replaying(from: Int64, to: Int64)
        /// Events in `from...to` are gone from quoted's log (retention) and cannot be shown.
        case pruned(from: Int64, to: Int64)
    }

    private let subscriber: Socket
    private let monitor: Socket
    /// The event endpoints, as given, for connecting again.
    private let endpoints: [String]
    /// Endpoints whose handshake was refused: when to connect again, and the wait before
    /// that, doubled at each refusal in a row.
    private var refusals: [String: (due: ContinuousClock.Instant?, wait: Duration)] = [:]
    private let client: CommandClient
    private let codec = WireCodec()
    private let options: Options
    private var sequencer: EventSequencer
    private var everConnected = false

    /// Connects to `events`, with `curve` when quoted requires it; `since` starts after that
    /// seq (`nil`: from now on).
    public init(
        context: Context, client: consuming CommandClient, events: String, since: Int64?,
        curve: CurveCredentials? = nil, options: Options = Options()
    ) throws(QuotedError) {
        do {
            let subscriber = try Socket(context, type: .sub)
            try subscriber.set(.linger, 0)
            try curve?.configure(subscriber)
            try subscriber.set(.receiveHighWaterMark, options.receiveHighWaterMark)
            if let size = options.receiveBuffer { try subscriber.set(.receiveBuffer, size) }
            try subscriber.set(.subscribe, [])
            let monitor = try subscriber.openMonitor(
                events: [
                    .connected, .disconnected, .handshakeSucceeded, .handshakeFailedProtocol, .handshakeFailedAuth,
                ])
            // Every daemon's stream: each publishes its own commits, and the gaps between them
            // are filled from the log like any other.
            let endpoints = CommandClient.endpoints(events)
            for endpoint in endpoints { try subscriber.connect(endpoint) }
            self.subscriber = subscriber
            self.monitor = monitor
            self.endpoints = endpoints
        } catch {
            throw QuotedError(.usage, "cannot subscribe to \(events): \(error.message)")
        }
        self.client = client
        self.options = options
        self.sequencer = EventSequencer(since: since)
    }

    deinit {
        // Before the monitor's reader closes (see `Socket.openMonitor`).
        subscriber.stopMonitor()
    }

    /// Hands every event, in `seq` order, exactly once, to `deliver`, until it returns `false`
    /// or `isStopped` (asked at least every ``Options/idleCheck``) returns `true`. `notice`
    /// hears about connections and replays. Throws only when quoted cannot be reached at the
    /// start (to learn where "now" is), its store is down then, or a reply cannot be read.
    public mutating func run(
        deliver: (WireEvent) -> Bool, notice: (Notice) -> Void, isStopped: () -> Bool = { false }
    ) throws(QuotedError) {
        // Where the stream stands now: the start for "from now on", the end of the first replay.
        let lastSeq = try lastSequence()
        if sequencer.next == nil { sequencer = EventSequencer(since: lastSeq) }
        notice(.following(after: (sequencer.next ?? 1) - 1))
        if sequencer.isBehind(lastSeq: lastSeq) {
            guard try replay(through: lastSeq, deliver: deliver, notice: notice) else { return }
        }
        var poller = Poller()
        let events = poller.register(subscriber)
        let monitorIndex = poller.register(monitor)
        let clock = ContinuousClock()
        var lastHeard = clock.now
        while !isStopped() {
            let ready: Int
            do {
                ready = try poller.poll(timeout: min(options.idleCheck, untilReconnect(now: clock.now)))
            } catch {
                throw QuotedError(.internal, "cannot poll the event socket: \(error.message)")
            }
            if ready > 0, poller.isReadable(monitorIndex) {
                while let event = try? monitor.receiveMonitorEvent(dontWait: true) {
                    // A connection to a refused endpoint counts once its handshake succeeds;
                    // until then its comings and goings are the refusal's own.
                    let refusedBefore = (matching(event.endpoint) ?? []).contains { refusals[$0] != nil }
                    if event.event == .connected, !refusedBefore {
                        notice(.connected(endpoint: event.endpoint))
                        if everConnected {
                            // Back after an outage: whatever was published meanwhile is lost live.
                            guard try catchUp(deliver: deliver, notice: notice) else { return }
                        }
                        everConnected = true
                    } else if event.event == .disconnected, !refusedBefore {
                        notice(.disconnected(endpoint: event.endpoint))
                    } else if event.event == .handshakeSucceeded {
                        let accepted = matching(event.endpoint) ?? refusals.filter { $0.value.due == nil }.map(\.key)
                        guard accepted.contains(where: { refusals[$0] != nil }) else { continue }
                        for endpoint in accepted { refusals[endpoint] = nil }
                        notice(.connected(endpoint: event.endpoint))
                        guard try catchUp(deliver: deliver, notice: notice) else { return }
                    } else if event.event.isDisjoint(with: [.connected, .disconnected]) {
                        notice(.refused(endpoint: event.endpoint, retry: refusedAgain(event.endpoint, now: clock.now)))
                    }
                }
            }
            reconnectRefused(now: clock.now)
            if ready > 0, poller.isReadable(events) {
                while let message = try? subscriber.receiveMultipart(dontWait: true) {
                    // A flood of messages must not keep the follower from stopping.
                    if isStopped() { return }
                    lastHeard = clock.now
                    guard message.frames.count == 2,
                        let event = try? codec.decode(WireEvent.self, from: message.frames[1])
                    else { continue }
                    if let delay = options.delayPerEvent { Thread.sleep(forTimeInterval: delay.seconds) }
                    if let every = options.dropEvery, event.seq % every == 0 { continue }
                    switch sequencer.classify(event.seq) {
                    case .duplicate:
                        continue
                    case .gap(let from, let to):
                        guard try replay(through: to, deliver: deliver, notice: notice, announce: from) else { return }
                        guard sequencer.classify(event.seq) == .print else { continue }
                    case .print:
                        break
                    }
                    sequencer.printed(event.seq)
                    guard deliver(event) else { return }
                }
            }
            if clock.now - lastHeard >= options.idleCheck {
                lastHeard = clock.now
                // Silence may hide a lost tail: ask where the log ends.
                guard try catchUp(deliver: deliver, notice: notice) else { return }
            }
        }
    }

    /// The endpoint given that `reported` (an endpoint as libzmq names it, its host resolved)
    /// stands for: itself, or the only one with its port; `nil` when that is not known.
    private func matching(_ reported: String) -> [String]? {
        if endpoints.contains(reported) { return [reported] }
        let port = reported.split(separator: ":").last
        let samePort = endpoints.filter { $0.split(separator: ":").last == port }
        return samePort.count == 1 ? samePort : nil
    }

    /// Records a refusal of `reported`; returns how long until it is tried again: 1 s, then
    /// twice as long at each refusal in a row, 30 s at most.
    private mutating func refusedAgain(_ reported: String, now: ContinuousClock.Instant) -> Duration {
        var longest = Duration.zero
        // Not known which: every endpoint is connected again (the others' gaps are replayed).
        for endpoint in matching(reported) ?? endpoints {
            let wait = refusals[endpoint].map { min($0.wait * 2, .seconds(30)) } ?? .seconds(1)
            refusals[endpoint] = (now + wait, wait)
            longest = max(longest, wait)
        }
        return longest
    }

    /// How long until the next refused endpoint is due to be connected again.
    private func untilReconnect(now: ContinuousClock.Instant) -> Duration {
        let due = refusals.values.compactMap(\.due).min()
        return due.map { max($0 - now, .milliseconds(1)) } ?? .seconds(86_400)
    }

    /// Connects again to the refused endpoints that are due: libzmq does not after a refusal.
    private mutating func reconnectRefused(now: ContinuousClock.Instant) {
        for (endpoint, refusal) in refusals {
            guard let due = refusal.due, due <= now else { continue }
            refusals[endpoint] = (nil, refusal.wait)
            try? subscriber.disconnect(endpoint)
            try? subscriber.connect(endpoint)
        }
    }

    /// Asks quoted for its last seq and replays up to it; an unreachable daemon is not fatal
    /// here (the follower keeps waiting for it to come back).
    private mutating func catchUp(deliver: (WireEvent) -> Bool, notice: (Notice) -> Void) throws(QuotedError) -> Bool {
        let lastSeq: Int64
        do {
            lastSeq = try lastSequence()
        } catch  where error.code == .timedOut || error.code == .unavailable {
            return true
        }
        guard sequencer.isBehind(lastSeq: lastSeq) else { return true }
        return try replay(through: lastSeq, deliver: deliver, notice: notice, announce: sequencer.next)
    }

    /// The log's last `seq`, from `ping` (``Reply/lastSequence()``).
    private func lastSequence() throws(QuotedError) -> Int64 {
        try client.answer(.ping).lastSequence()
    }

    /// Replays from the next expected seq through `last`, page by page.
    private mutating func replay(
        through last: Int64, deliver: (WireEvent) -> Bool, notice: (Notice) -> Void, announce: Int64? = nil
    ) throws(QuotedError) -> Bool {
        if let announce { notice(.replaying(from: announce, to: last)) }
        while let next = sequencer.next, next <= last {
            let request = Request.events(since: next - 1, limit: options.replayPage)
            let answer: Reply
            do {
                answer = try client.answer(request)
            } catch  where error.code == .timedOut {
                return true  // try again at the next gap or idle check
            }
            guard case .events(let events, _, _) = answer else {
                throw QuotedError.unexpectedReply(to: request.operation)
            }
            guard let first = events.first, let final = events.last else {
                // Nothing left after `next`: the rest was pruned.
                notice(.pruned(from: next, to: last))
                sequencer.printed(last)
                return true
            }
            if first.seq > next {
                notice(.pruned(from: next, to: first.seq - 1))
            }
            for event in events where event.seq >= next && event.seq <= last {
                sequencer.printed(event.seq)
                guard deliver(event) else { return false }
            }
            if final.seq >= last { break }
            // A page that brought nothing after `next` (a daemon answering out of range) is not
            // asked for again at once: the next gap or idle check tries again.
            if sequencer.next == next { return true }
        }
        return true
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`, for APIs that take one.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
