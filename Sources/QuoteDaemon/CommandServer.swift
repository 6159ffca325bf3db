import Foundation
public import Logging
import QuoteCore
import QuoteRules
public import QuoteStore
import QuoteWire
public import ServiceLifecycle
import Synchronization
import Threads
import ZeroMQ

/// The daemon's engine, where every message enters: one I/O thread owns the ROUTER (commands)
/// and the PUB (events). It drains waiting requests, decodes and checks them; the store loop
/// (``BatchCommitter``) applies their writes in one transaction (group commit) and answers reads
/// from committed state; the I/O thread then replies and publishes, never before the commit.
///
/// The thread is its own, not the cooperative pool's: `zmq_poll` blocks. Graceful shutdown
/// sets a flag the loop sees within one poll interval; it finishes the batch in hand, replies,
/// publishes, and closes its sockets with a short linger.
public final class CommandServer: ServiceLifecycle.Service {
    /// Where the sockets ended up, wildcard ports resolved; known once `onReady` is told.
    public struct Endpoints: Sendable, Hashable {
        public var commands: String
        public var events: String
    }

    private let configuration: DaemonConfiguration
    private let access: AccessControl?
    private let store: any QuoteStore
    private let catalog: LiveCatalog
    private let logger: Logger
    private let notifier: SystemdNotifier
    private let metrics: DaemonMetrics
    private let stopping = Atomic<Bool>(false)
    /// Following another daemon's catalog failed the last time (logged once until it works).
    private let followFailing = Atomic<Bool>(false)
    private let bound = Mutex<Endpoints?>(nil)
    /// The store loop, while running: where the daemon's own requests go.
    private let worker = Mutex<BatchCommitter<RequestTicket>?>(nil)
    private let onReady: @Sendable (Endpoints) -> Void
    /// How long one call of the store loop (a batch's transaction, or one of its reads) may go
    /// unanswered before the loop is taken for stuck and systemd's watchdog is no longer told
    /// the daemon lives (so that it restarts it).
    private let storeStallLimit: Duration

    /// The longest one store call may go unanswered by default: well past the waits the
    /// stores bound themselves with their default settings (SQLite's busy timeout,
    /// PostgreSQL's connection and transaction timeouts). The executable raises it with them.
    public static let defaultStoreStallLimit: Duration = .seconds(120)

    /// Creates the server; nothing is bound until ``run()``. With `access`, both sockets are
    /// CURVE servers letting in only its listed keys, as their roles allow. Requests, batches
    /// and events are counted in `metrics`. A store call unanswered after `storeStallLimit`
    /// stops the watchdog's notifications until it is answered.
    public init(
        configuration: DaemonConfiguration, access: AccessControl? = nil, store: any QuoteStore, catalog: LiveCatalog,
        logger: Logger, notifier: SystemdNotifier = .init(), metrics: DaemonMetrics = .unexported(),
        storeStallLimit: Duration = defaultStoreStallLimit, onReady: @escaping @Sendable (Endpoints) -> Void = { _ in }
    ) {
        self.storeStallLimit = storeStallLimit
        self.metrics = metrics
        self.configuration = configuration
        self.access = access
        self.store = store
        self.catalog = catalog
        self.logger = logger
        self.notifier = notifier
        self.onReady = onReady
    }

    /// The bound endpoints, while listening.
    public var endpoints: Endpoints? { bound.withLock { $0 } }

    /// Whether both sockets are bound and the daemon is not stopping: it takes requests.
    public var isListening: Bool { endpoints != nil && !stopping.load(ordering: .relaxed) }

    public func run() async throws {
        let lastSeq = try await store.lastSequence()
        // With several daemons on one store, the others' events come from the log.
        let tail =
            store.isShared
            ? try LogTail(
                store: store, after: lastSeq, logger: logger, listening: eventsUnmonitored,
                observe: { [weak self] events in
                    // Another daemon changed the catalog: its version is in force here too.
                    guard events.contains(where: \.changesCatalog) else { return }
                    await self?.followCatalog()
                },
                checkCatalog: { [weak self] in await self?.followCatalogIfNewer() },
                encode: { [catalog, configuration] events in
                    ReplyEncoder(maxReplyBytes: configuration.maxReplyBytes).encodeLogged(
                        events, currency: catalog.current.currency)
                }
            ) : nil
        // Page reads per batch: their replies' encoding, on the I/O thread, stays within
        // `bytesPerTurn`; a read loads no more rows than fit in a reply (none under 512 bytes).
        let worker = try BatchCommitter(
            store: store, catalog: catalog, logger: logger, metrics: metrics, maxBatch: configuration.maxBatch,
            maxPageReads: max(1, Self.bytesPerTurn / configuration.maxReplyBytes / 4),
            maximumRows: max(16, configuration.maxReplyBytes / 512), daemonTicket: RequestTicket.daemon)
        // Whatever the roster became while quoted was down, free mechanics take from the line.
        worker.enqueue(.serveWaitList)
        self.worker.withLock { $0 = worker }
        defer { self.worker.withLock { $0 = nil } }
        // The store loop runs where the store's transactions do, or on a thread of its own.
        let ownThread = store.executor == nil ? ExecutorThread(name: "quoted-store") : nil
        defer { ownThread?.stop() }
        let storeExecutor = store.executor ?? ownThread
        // Cancelled (the group ending without a graceful shutdown, a service having failed),
        // it stops as it would on SIGTERM: the batch in hand answered, then the sockets closed.
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask(executorPreference: storeExecutor) { await worker.run() }
                    if let tail {
                        group.addTask { await tail.run() }
                    }
                    defer { group.cancelAll() }
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        let thread = Thread(named: "quoted-io") { [self] in
                            // However the loop ends, the store loop ends after the last batch.
                            defer { worker.stop() }
                            do {
                                try loop(worker: worker, tail: tail, lastSeq: lastSeq)
                                continuation.resume()
                            } catch {
                                continuation.resume(throwing: error)
                            }
                        }
                        thread.start()
                    }
                }
            } onGracefulShutdown: { [self] in
                stopping.store(true, ordering: .relaxed)
            }
        } onCancel: { [self] in
            stopping.store(true, ordering: .relaxed)
        }
    }

    /// Puts the store's catalog in force here if it is newer than this daemon's.
    private func followCatalog() async {
        do {
            let stored = try await store.catalog()
            if let worker = worker.withLock({ $0 }) { worker.adopt(stored) } else { catalog.advance(to: stored) }
            catalogFollowing(failed: nil, nil)
        } catch {
            catalogFollowing(failed: "cannot read the catalog another daemon changed", error)
        }
    }

    /// Puts the store's catalog in force here if its version is newer than this daemon's: a
    /// small question, asked while the log goes unread (``LogTail``).
    private func followCatalogIfNewer() async {
        let version: Int64
        do {
            version = try await store.catalogVersion()
        } catch {
            catalogFollowing(failed: "cannot read the catalog's version", error)
            return
        }
        guard version > catalog.current.version else { return catalogFollowing(failed: nil, nil) }
        await followCatalog()
    }

    /// Logs a failure to follow another daemon's catalog once until it works again, and the
    /// recovery; `message` `nil` when it worked.
    private func catalogFollowing(failed message: String?, _ error: (any Error)?) {
        let wasFailing = followFailing.exchange(message != nil, ordering: .relaxed)
        if let message, !wasFailing {
            logger.warning("\(message)", metadata: ["error": "\(error.map { "\($0)" } ?? "")"])
        } else if message == nil, wasFailing {
            logger.notice("following the store's catalog again")
        }
    }

    /// Gives every free mechanic the oldest waiting quote they can serve, in the next batch:
    /// after the roster changed (a mechanic added or back). Does nothing while not running.
    public func serveWaitList() {
        worker.withLock { $0 }?.enqueue(.serveWaitList)
    }

    /// Asks the loop to stop after its current batch (also what graceful shutdown does).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
    }

    // MARK: The I/O loop

    /// Request bytes the I/O thread decodes in one turn of its loop before it looks at its
    /// other sockets and the watchdog again.
    static let bytesPerTurn = 4 << 20

    private func loop(worker: BatchCommitter<RequestTicket>, tail: LogTail?, lastSeq: Int64) throws {
        let decoder = RequestDecoder(
            maxMessageBytes: configuration.maxMessageBytes, callers: access, sharedStore: store.isShared)
        let encoder = ReplyEncoder(maxReplyBytes: configuration.maxReplyBytes)
        metrics.starting(lastSeq: lastSeq)
        let context = try Context()
        // The ZAP handler first: no handshake may happen before it can answer.
        // (Without `security` it stays unbound, and never readable.)
        let zap = try Socket(context, type: .rep)
        try zap.set(.linger, 0)
        if access != nil { try zap.bind(ZAP.endpoint) }
        let router = try Socket(context, type: .router)
        try secure(router, domain: AccessControl.commandsDomain)
        try router.set(.linger, 0)
        // Bytes, not counts: each queue holds at most its byte budget of the largest messages.
        try router.set(.receiveHighWaterMark, Int32(clamping: configuration.requestHighWaterMark))
        try router.set(.sendHighWaterMark, Int32(clamping: configuration.replyHighWaterMark))
        // Twice the answerable size: a frame a little too large gets an error reply; a larger
        // one costs the peer its connection, before it is ever buffered whole.
        try router.set(.maxMessageSize, Int64(configuration.maxMessageBytes) * 2)
        try router.set(.heartbeatInterval, 5_000)
        try router.set(.heartbeatTimeout, 15_000)
        try router.set(.heartbeatTTL, 30_000)
        // A peer that connects and never finishes its handshake is dropped after 10 s.
        try router.set(.handshakeInterval, 10_000)
        let publisher = try Socket(context, type: .pub)
        try secure(publisher, domain: AccessControl.eventsDomain)
        try publisher.set(.linger, 0)
        try publisher.set(.sendHighWaterMark, Int32(clamping: configuration.eventHighWaterMark))
        // What subscribers send are subscriptions, a topic prefix each: a frame longer than any
        // topic could be costs its peer the connection, before it is buffered whole.
        try publisher.set(.maxMessageSize, Self.maximumSubscriptionBytes)
        // Heartbeats find subscribers that vanished without closing, so they stop counting.
        try publisher.set(.heartbeatInterval, 5_000)
        try publisher.set(.heartbeatTimeout, 15_000)
        try publisher.set(.handshakeInterval, 10_000)
        // Connections, counted from both sockets' monitors: past `maxConnections`, or
        // `maxConnectionsPerAddress` from the asking peer's address, the ZAP handler refuses new
        // handshakes (with `security`; without it quoted is local only).
        // Attached before either socket is bound, so that no connection goes uncounted.
        var connections = ConnectionCount(
            limit: configuration.maxConnections, perAddressLimit: configuration.maxConnectionsPerAddress)
        let commandsMonitor = try router.openMonitor(events: [.accepted, .disconnected])
        let eventsMonitor = try publisher.openMonitor(events: [.accepted, .disconnected, .closed])
        try router.bind(configuration.endpoint)
        try publisher.bind(configuration.events)
        let endpoints = Endpoints(commands: router.lastEndpoint, events: publisher.lastEndpoint)
        bound.withLock { $0 = endpoints }
        defer { bound.withLock { $0 = nil } }

        logger.notice(
            "quoted ready",
            metadata: [
                "commands": "\(endpoints.commands)", "events": "\(endpoints.events)", "lastSeq": "\(lastSeq)",
                "security": "\(access.map { "curve, \($0.principals.count) client keys" } ?? "none (local only)")",
            ])
        notifier.notify("READY=1\nSTATUS=listening on \(endpoints.commands), publishing on \(endpoints.events)")
        onReady(endpoints)

        var poller = Poller()
        let routerIndex = poller.register(router)
        let workerIndex = poller.register(fileDescriptor: worker.readyDescriptor)
        // Someone may receive an event while a connection to the events socket is open (its
        // monitor says), or always on `inproc://`, whose connections no monitor reports.
        let inproc = eventsUnmonitored
        var outbox = EventOutbox(
            after: lastSeq, isOrdered: tail != nil,
            window: EventWindow(capacity: configuration.eventHighWaterMark, budget: configuration.eventQueueBytes),
            encoder: encoder, listened: inproc)
        // With the batch being received full, only the store matters: polling the ROUTER too
        // would return at once, again and again, while messages wait in its queue. (And
        // handshakes: the ZAP handler is asked either way.)
        var storeOnly = Poller()
        storeOnly.register(fileDescriptor: worker.readyDescriptor)
        let zapIndex = poller.register(zap)
        let zapOnlyIndex = storeOnly.register(zap)
        // Never readable, but polling it has libzmq process its commands while nothing is
        // published: a subscriber's connection closing, or all of them when unbound.
        poller.register(publisher)
        storeOnly.register(publisher)
        // What other daemons committed, read from the log: published in turn with our own.
        let tailIndex = tail.map { poller.register(fileDescriptor: $0.readyDescriptor) }
        let tailOnlyIndex = tail.map { storeOnly.register(fileDescriptor: $0.readyDescriptor) }
        let commandsMonitorIndex = (
            all: poller.register(commandsMonitor), storeOnly: storeOnly.register(commandsMonitor)
        )
        let eventsMonitorIndex = (all: poller.register(eventsMonitor), storeOnly: storeOnly.register(eventsMonitor))
        let metadata = access == nil ? [] : ["User-Id"]
        let clock = ContinuousClock()
        var skipsLogged = clock.now - .seconds(60)
        var nextWatchdog = clock.now
        var storeStalled = false
        let pollInterval = min(.milliseconds(100), notifier.watchdogInterval ?? .milliseconds(100))
        var room = true
        /// The events socket was unbound to drop its connections, and is not bound again yet.
        var eventsUnbound = false

        // While the store loop commits batch N, this thread replies to and publishes what
        // was committed before it, and receives and decodes batch N+1 message by message,
        // straight into the worker; when N is done, the store loop takes N+1 by itself.
        do {
            while !stopping.load(ordering: .relaxed) {
                let storeReady: Bool
                let routerReady: Bool
                let zapReady: Bool
                let tailReady: Bool
                if room {
                    try poller.poll(timeout: pollInterval)
                    (storeReady, routerReady) = (poller.isReadable(workerIndex), poller.isReadable(routerIndex))
                    zapReady = poller.isReadable(zapIndex)
                    tailReady = tailIndex.map(poller.isReadable) ?? false
                } else {
                    try storeOnly.poll(timeout: pollInterval)
                    (storeReady, routerReady) = (storeOnly.isReadable(0), false)
                    zapReady = storeOnly.isReadable(zapOnlyIndex)
                    tailReady = tailOnlyIndex.map(storeOnly.isReadable) ?? false
                }
                if let tail, tailReady {
                    try publishLogged(tail.take(), tail: tail, outbox: &outbox, publisher: publisher)
                }
                // Before any handshake is answered the monitors are read whatever the poll said:
                // a connection's `accepted` always comes before its ZAP request, but may become
                // readable after the poll that saw the request.
                let monitorsReady =
                    zapReady
                    || (room
                        ? poller.isReadable(commandsMonitorIndex.all) || poller.isReadable(eventsMonitorIndex.all)
                        : storeOnly.isReadable(commandsMonitorIndex.storeOnly)
                            || storeOnly.isReadable(eventsMonitorIndex.storeOnly))
                if monitorsReady {
                    try Self.count(commandsMonitor, on: .commands, into: &connections)
                    try Self.count(eventsMonitor, on: .events, into: &connections)
                    try hear(inproc || connections.eventsOpen > 0, outbox: &outbox, tail: tail, publisher: publisher)
                }
                if let access, zapReady {
                    try Self.answerHandshakes(zap, access: access, connections: connections)
                }
                if let access, access.takeSubscriberRevocation() {
                    // A subscriber's key was withdrawn: unbinding drops every subscription; the
                    // others reconnect and authenticate anew, and catch up on what they missed by
                    // seq. The port is free again once libzmq has closed the old listener, a
                    // moment later: until then events are published to no one. Still unbound from
                    // an earlier withdrawal, it has no subscriber to drop: those who connect once it
                    // is bound again are checked against the allow-list as it is then.
                    if !eventsUnbound {
                        try publisher.unbind(endpoints.events)
                        connections.eventsUnbound()
                        try hear(inproc, outbox: &outbox, tail: tail, publisher: publisher)
                        eventsUnbound = true
                        logger.notice("events socket unbound: a withdrawn key's subscriptions are dropped")
                    }
                }
                if eventsUnbound, try Self.bindAgain(publisher, endpoints.events) {
                    eventsUnbound = false
                    logger.notice("events socket bound again", metadata: ["events": "\(endpoints.events)"])
                }
                if storeReady {
                    var done = worker.takeCommitted()
                    // Oldest first, each moved out of the array: its replies are written into
                    // the arrays its requests came in, which must be its alone.
                    done.reverse()
                    while let committed = done.popLast() {
                        try send(
                            committed, encoder: encoder, router: router, publisher: publisher, outbox: &outbox,
                            tail: tail)
                    }
                    room = worker.hasRoom
                }
                if room && (routerReady || storeReady) {
                    // A bounded turn: past the budget the loop goes round again (the ROUTER stays
                    // readable), so handshakes, the store's results and the watchdog keep their turn
                    // however much a peer sends.
                    var received = 0
                    while received < Self.bytesPerTurn,
                        var message = try router.receiveMultipart(
                            dontWait: true, metadata: metadata, maximumFrames: RequestDecoder.maximumFrames)
                    {
                        received += message.frames.reduce(0) { $0 + $1.count }
                        let userId = message.metadata["User-Id"]
                        // The frames handed over, not copied: they become the reply's envelope.
                        room = worker.receive { decoder.decode(message.takeFrames(), userId: userId, into: &$0) }
                        if !room { break }
                    }
                }
                access?.summarizeRefusals()
                let now = clock.now
                if let interval = notifier.watchdogInterval, now >= nextWatchdog {
                    nextWatchdog = now + interval
                    // This loop turning is not enough: a store loop stuck in one batch (a lock
                    // never released, a disk that never answers) leaves every write unanswered.
                    if let since = worker.committingSince, now - since > storeStallLimit {
                        if !storeStalled {
                            storeStalled = true
                            logger.critical(
                                "the store has not answered for longer than the stall limit; no longer telling systemd's watchdog the daemon lives",
                                metadata: ["limit": "\(storeStallLimit)"])
                            notifier.notify("STATUS=store stalled: no answer for over \(storeStallLimit)")
                        }
                    } else {
                        if storeStalled {
                            storeStalled = false
                            logger.notice("the store commits again")
                            notifier.notify(
                                "STATUS=listening on \(endpoints.commands), publishing on \(endpoints.events)")
                        }
                        notifier.notify("WATCHDOG=1")
                    }
                }
                if outbox.window.skipped > 0, now - skipsLogged >= .seconds(10) {
                    logger.warning(
                        "events not published live: with them the last \(outbox.window.capacity) would pass eventQueueBytes; subscribers fill the gap by seq",
                        metadata: ["skipped": "\(outbox.takeSkippedByWindow())"])
                    skipsLogged = now
                }
            }
            // systemd hears of the stop at once: the drain below waits for the store, and from
            // here on its stop timeout, not the watchdog, bounds how long that may take.
            notifier.notify("STOPPING=1\nSTATUS=stopping: answering what was received")
            // Answer everything received: the batch being committed, then any received after it.
            // What else wakes the poll is served too, or it would wake it again at once: the
            // monitors (a reader that falls behind would block libzmq's I/O thread), handshakes
            // and other daemons' commits.
            while !worker.isDrained {
                try storeOnly.poll(timeout: .seconds(1))
                if storeOnly.isReadable(commandsMonitorIndex.storeOnly)
                    || storeOnly.isReadable(eventsMonitorIndex.storeOnly)
                {
                    try Self.count(commandsMonitor, on: .commands, into: &connections)
                    try Self.count(eventsMonitor, on: .events, into: &connections)
                    try hear(inproc || connections.eventsOpen > 0, outbox: &outbox, tail: tail, publisher: publisher)
                }
                if let access, storeOnly.isReadable(zapOnlyIndex) {
                    try Self.answerHandshakes(zap, access: access, connections: connections)
                }
                if let tail, let tailOnlyIndex, storeOnly.isReadable(tailOnlyIndex) {
                    try publishLogged(tail.take(), tail: tail, outbox: &outbox, publisher: publisher)
                }
                var done = worker.takeCommitted()
                done.reverse()
                while let committed = done.popLast() {
                    try send(
                        committed, encoder: encoder, router: router, publisher: publisher, outbox: &outbox, tail: tail)
                }
            }
        } catch {
            // The monitors stop before their readers close, on this path too (see
            // `Socket.openMonitor`): an event sent to a closed reader blocks libzmq's I/O thread.
            router.stopMonitor()
            publisher.stopMonitor()
            throw error
        }
        notifier.notify("STATUS=stopping")
        logger.notice("quoted stopping: in-flight batch answered, closing sockets")
        // The monitors stop before their readers close (see `Socket.openMonitor`).
        router.stopMonitor()
        publisher.stopMonitor()
        // Give the last replies and events a moment to leave.
        router.close(linger: .milliseconds(500))
        publisher.close(linger: .milliseconds(500))
        zap.close(linger: .zero)
        commandsMonitor.close(linger: .zero)
        eventsMonitor.close(linger: .zero)
    }

    /// Counts in every connection event waiting on `monitor`, the monitor of `socket`.
    private static func count(
        _ monitor: borrowing Socket, on socket: ConnectionCount.Socket, into connections: inout ConnectionCount
    ) throws(ZeroMQError) {
        while let event = try monitor.receiveMonitorEvent(dontWait: true) {
            connections.record(event, on: socket)
        }
    }

    /// Makes `socket` a CURVE server whose handshakes the ZAP handler decides, for `domain`;
    /// nothing without `security`.
    private func secure(_ socket: borrowing Socket, domain: String) throws(ZeroMQError) {
        guard let access else { return }
        try socket.set(.curveServer, true)
        try socket.set(.curveSecretKey, access.serverKeys.secretKey)
        try socket.set(.zapDomain, domain)
        try socket.set(.zapEnforceDomain, true)
    }

    /// Whether the events socket's connections go unseen by its monitor (`inproc://`): events
    /// are then published as though someone always listened.
    private var eventsUnmonitored: Bool { configuration.events.hasPrefix("inproc://") }

    /// The largest frame a subscriber may send: a subscription is one byte and a topic prefix,
    /// and every topic quoted publishes is a few dozen bytes.
    static let maximumSubscriptionBytes: Int64 = 1_024

    /// Binds `socket` to `endpoint` again; `false` while the port is still held by the
    /// listener being closed (to try again on the loop's next turn).
    private static func bindAgain(_ socket: borrowing Socket, _ endpoint: String) throws(ZeroMQError) -> Bool {
        do {
            try socket.bind(endpoint)
            return true
        } catch {
            guard error.errno == EADDRINUSE else { throw error }
            return false
        }
    }

    /// Answers every waiting ZAP request (RFC 27) from the allow-list.
    private static func answerHandshakes(
        _ zap: borrowing Socket, access: AccessControl, connections: borrowing ConnectionCount
    ) throws(ZeroMQError) {
        while let message = try zap.receiveMultipart(dontWait: true) {
            guard let request = ZAP.Request(frames: message.frames) else {
                _ = try zap.send(multipart: [
                    Array("1.0".utf8), [], Array("500".utf8), Array("bad request".utf8), [], [],
                ])
                continue
            }
            _ = try zap.send(
                multipart: access.authenticate(request, limit: connections.exceeded(from: request.address)),
                dontWait: true)
        }
    }

    /// Sends a batch's replies, then its events (``EventOutbox``): a client's next request can
    /// be on its way while the events are still being written.
    private func send(
        _ committed: consuming CommittedBatch<RequestTicket>, encoder: ReplyEncoder, router: borrowing Socket,
        publisher: borrowing Socket, outbox: inout EventOutbox, tail: LogTail?
    ) throws(ZeroMQError) {
        let encoded = encoder.encodeReplies(consume committed, activity: metrics.activity)
        for reply in encoded.replies {
            // A vanished or slow client loses its reply; the loop never waits for it.
            _ = try router.send(multipart: reply, dontWait: true)
        }
        metrics.answered(encoded.tickets, at: .now)
        let release = outbox.add(committed: encoded)
        try publish(release, through: outbox.lastPublished, tail: tail, publisher: publisher)
        // Another daemon committed in between: its events are in the log.
        if outbox.isWaiting { tail?.wake() }
    }

    /// Publishes what the tail read from the log, in order with this daemon's own.
    private func publishLogged(
        _ deliveries: [LogTail.Delivery], tail: LogTail, outbox: inout EventOutbox, publisher: borrowing Socket
    ) throws(ZeroMQError) {
        for delivery in deliveries {
            let release = outbox.add(read: delivery.events, after: delivery.after)
            if release.skipped > 0 {
                logger.warning(
                    "events left the log, or could not be read, before they were published; subscribers fill the gap with events",
                    metadata: ["skipped": "\(release.skipped)", "resumingAt": "\(delivery.events.first?.seq ?? 0)"])
            }
            try publish(release, through: outbox.lastPublished, tail: tail, publisher: publisher)
        }
        // With no one listening, the tail reads nothing, but says how far the log goes.
        if let through = tail.takeIdleThrough() {
            let release = outbox.passUnheard(through: through)
            try publish(release, through: outbox.lastPublished, tail: tail, publisher: publisher)
        }
    }

    /// Records whether anyone may receive events (``EventOutbox/listened``), and publishes
    /// what that lets go.
    private func hear(
        _ listened: Bool, outbox: inout EventOutbox, tail: LogTail?, publisher: borrowing Socket
    ) throws(ZeroMQError) {
        guard listened != outbox.listened else { return }
        outbox.listened = listened
        tail?.listen(listened)
        let release = outbox.passUnheard()
        try publish(release, through: outbox.lastPublished, tail: tail, publisher: publisher)
    }

    /// Sends what `release` lets out; the events through `lastSeq` have had their turn, which
    /// `tail` hears.
    private func publish(
        _ release: EventOutbox.Release, through lastSeq: Int64, tail: LogTail?, publisher: borrowing Socket
    ) throws(ZeroMQError) {
        for event in release.send {
            _ = try publisher.send(multipart: event.topic, event.body, dontWait: true)
        }
        metrics.published(Int(clamping: release.released), lastSeq: lastSeq)
        tail?.published(through: lastSeq)
    }
}
