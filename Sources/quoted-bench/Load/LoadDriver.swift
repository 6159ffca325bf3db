import Foundation
import QuoteWire
import ZeroMQ

/// What one run of the load generator does.
@dynamicMemberLookup
struct LoadPlan: Sendable {
    var endpoint: String
    var traffic: Traffic
    /// At most this many requests (`submit` and `mixed`), e.g. to fill the store before a run.
    var limit: Int?
    var factory: RequestFactory
    /// The PUB endpoint, for contention with waiting bookings: a quote that waits is completed
    /// once its `quote.booked` event arrives.
    var events: String?
    /// Request ids start here, so that several runs never reuse an idempotency key.
    var firstRequestID: Int64 = 1
    var seed: UInt64 = 42
    /// CURVE keys for every socket, against a quoted with `security`.
    var curve: BenchKeys?
    /// More daemons every client also connects to (several daemons on one PostgreSQL
    /// database): ZeroMQ spreads each client's requests over all of them.
    var otherEndpoints: [String] = []

    subscript<Value>(dynamicMember path: KeyPath<Traffic, Value>) -> Value { traffic[keyPath: path] }
}

/// What a run measured.
struct LoadResult: Sendable {
    /// Seconds from the first request to the last reply counted.
    var elapsed: Double = 0
    var sent = 0
    var replies = 0
    var ok = 0
    /// Refusals and errors by code.
    var errors: [String: Int] = [:]
    /// Requests sent and accepted per kind.
    var sentByKind = [Int](repeating: 0, count: RequestKind.allCases.count)
    var okByKind = [Int](repeating: 0, count: RequestKind.allCases.count)
    /// Request -> reply, measured from when each request was due (open loop) or sent.
    var ack = Latency()
    /// Open loop: how late the generator sent each request after it was due (0 when on time or
    /// early). Counted in `ack` too; shown so that a late generator is not read as a slow daemon.
    var late = Latency()
    /// Book sent -> complete acknowledged (contention), retries included.
    var cycle = Latency()
    var cycles = 0
    /// Contention with `wait`: bookings that waited in line before they were served.
    var waited = 0
    /// Requests never answered (still outstanding when the drain gave up).
    var unanswered = 0
    /// Accepted submissions: quote id and when the submit was due, for submit -> event.
    var submitted: [(quote: Int64, at: UInt64)] = []
    var nextRequestID: Int64 = 0

    var throughput: Double { elapsed > 0 ? Double(replies) / elapsed : 0 }
}

/// Drives quoted through `clients` DEALER sockets, all owned by the calling thread and
/// served by one poller, closed loop (a window of requests per client) or open loop (requests
/// due at fixed times, latency counted from when each was due, so a stalled daemon cannot
/// hide its stall by slowing the generator down: no coordinated omission).
final class LoadDriver {
    private final class Client {
        let socket: Socket
        var outstanding: [Int64: (kind: RequestKind, start: UInt64, quote: Int64)] = [:]
        var nextDue: UInt64 = 0
        /// Ready quotes (mixed: to book or cancel; contention: prepared, to book in turn).
        var ready: [Int64] = []
        var booked: [Int64] = []
        var cycleStart: UInt64 = 0
        var quota = 0

        init(socket: consuming Socket) { self.socket = socket }
    }

    /// A SUB socket's one owner.
    private final class Subscription {
        let socket: Socket

        init(socket: consuming Socket) { self.socket = socket }
    }

    private let plan: LoadPlan
    private let clients: [Client]
    private var poller = Poller()
    private var result = LoadResult()
    private var nextID: Int64
    private var random: SplitMix
    /// Contention with `wait`: the `quote.booked` events, on the poller's last slot.
    private let booked: Subscription?
    /// Waiting quotes by the client that booked them, until their `quote.booked` arrives.
    private var awaiting: [Int64: Int] = [:]
    /// Quotes whose `quote.booked` arrived before the reply that said they wait.
    private var bookedEarly: Set<Int64> = []
    /// When sending stops (contention: no new cycle starts after it).
    private var end = UInt64.max

    /// Connects the clients; call ``run()`` on the same thread.
    init(context: Context, plan: LoadPlan) throws {
        self.plan = plan
        nextID = plan.firstRequestID
        random = SplitMix(seed: plan.seed)
        var clients: [Client] = []
        for _ in 0..<plan.clients {
            let socket = try Socket(context, type: .dealer)
            try plan.curve?.configure(socket)
            try socket.set(.linger, 0)
            try socket.set(.sendHighWaterMark, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.connect(plan.endpoint)
            for other in plan.otherEndpoints { try socket.connect(other) }
            let client = Client(socket: socket)
            poller.register(client.socket)
            clients.append(client)
        }
        self.clients = clients
        if plan.factory.wait, let events = plan.events {
            let socket = try Socket(context, type: .sub)
            try plan.curve?.configure(socket)
            try socket.set(.linger, 0)
            try socket.set(.receiveHighWaterMark, 0)
            try socket.set(.subscribe, Array("quote.booked".utf8))
            try socket.connect(events)
            poller.register(socket)
            booked = Subscription(socket: socket)
        } else {
            booked = nil
        }
    }

    /// Runs the plan to its end and returns what it measured.
    func run() throws -> LoadResult {
        if plan.workload == .contention { try prepareContention() }
        let start = monotonicNanos()
        let end = start + UInt64(plan.duration.seconds * 1e9)
        self.end = end
        let interval = plan.rate.map { UInt64(Double(plan.clients) / $0 * 1e9) }
        for (index, client) in clients.enumerated() {
            client.nextDue = start + (interval ?? 0) * UInt64(index) / UInt64(max(plan.clients, 1))
            if plan.workload == .contention { bookNext(client, now: start) }
        }
        let drainDeadline: UInt64 = 10_000_000_000
        var lastReply = start
        while true {
            let now = monotonicNanos()
            let sending =
                plan.workload == .contention
                ? result.cycles < plan.cycles && now < end : now < end && result.sent < plan.limit ?? .max
            var outstanding = 0
            var nextDue = UInt64.max
            for client in clients {
                if sending && plan.workload != .contention {
                    if let interval {
                        while client.nextDue <= now + 200_000 && client.outstanding.count < 100_000
                            && result.sent < plan.limit ?? .max
                        {
                            // Up to 200 µs early, so a poll's millisecond timeout does not make
                            // it late; latency counts from the earlier of due and sent, so a
                            // reply that beats the due time never reads as negative (it wrapped).
                            try send(client, start: min(client.nextDue, now))
                            result.late.record(nanoseconds: now &- min(client.nextDue, now))
                            client.nextDue += interval
                        }
                        nextDue = min(nextDue, client.nextDue)
                    } else {
                        while client.outstanding.count < plan.window && result.sent < plan.limit ?? .max {
                            try send(client, start: now)
                        }
                    }
                }
                outstanding += client.outstanding.count
            }
            if (!sending || plan.workload == .contention) && outstanding == 0 && awaiting.isEmpty
                || !sending && now > end + drainDeadline
            {
                result.unanswered = outstanding
                // Requests still unanswered count at their age now: a lower bound, but leaving
                // them out would flatter an overloaded daemon.
                for client in clients {
                    for request in client.outstanding.values { result.ack.record(nanoseconds: now &- request.start) }
                }
                break
            }
            let timeout: Duration =
                nextDue == .max
                ? .milliseconds(100) : .milliseconds(Int((nextDue &- min(nextDue, now) + 999_999) / 1_000_000))
            guard try poller.poll(timeout: timeout) > 0 else { continue }
            let received = monotonicNanos()
            for (index, client) in clients.enumerated() where poller.isReadable(index) {
                while let reply = try client.socket.receive(dontWait: true) {
                    try handle(reply, from: client, at: received)
                    lastReply = received
                }
            }
            if let booked, poller.isReadable(clients.count) {
                while let event = try booked.socket.receiveMultipart(dontWait: true) {
                    guard let quote = ReplyScanner(bytes: event.frames.last ?? []).eventQuoteID else { continue }
                    if let index = awaiting.removeValue(forKey: quote) {
                        try send(clients[index], kind: .complete, quote: quote, start: received)
                    } else {
                        bookedEarly.insert(quote)
                    }
                }
            }
        }
        result.elapsed = Double(lastReply - start) / 1e9
        result.nextRequestID = nextID
        return result
    }

    /// Contention needs ready quotes to book: submits them, untimed, until every client holds
    /// its share of the cycles.
    private func prepareContention() throws {
        for (index, client) in clients.enumerated() {
            client.quota = plan.cycles / plan.clients + (index < plan.cycles % plan.clients ? 1 : 0)
        }
        while clients.contains(where: { $0.ready.count < $0.quota || !$0.outstanding.isEmpty }) {
            for client in clients {
                while client.ready.count + client.outstanding.count < client.quota && client.outstanding.count < 64 {
                    try send(client, kind: .submit, quote: 0, start: monotonicNanos())
                }
            }
            guard try poller.poll(timeout: .seconds(10)) > 0 else {
                throw BenchError("quoted stopped answering while contention quotes were prepared")
            }
            for (index, client) in clients.enumerated() where poller.isReadable(index) {
                while let reply = try client.socket.receive(dontWait: true) {
                    let scan = ReplyScanner(bytes: reply)
                    guard let id = scan.requestID, client.outstanding.removeValue(forKey: id) != nil else { continue }
                    if scan.isOK, scan.state == "ready", let quote = scan.quoteID { client.ready.append(quote) }
                }
            }
        }
        result = LoadResult()
    }

    /// Sends the workload's next request for `client`.
    private func send(_ client: Client, start: UInt64) throws {
        switch plan.workload {
        case .submit, .contention:
            try send(client, kind: .submit, quote: 0, start: start)
        case .mixed:
            let roll = random.next() % 100
            switch roll {
            case 0..<35: try send(client, kind: .submit, quote: 0, start: start)
            case 35..<40: try send(client, kind: .submitPending, quote: 0, start: start)
            case 40..<45: try send(client, kind: .submitInvalid, quote: 0, start: start)
            case 45..<65:
                let quote = client.booked.last ?? client.ready.last ?? 1
                try send(client, kind: .get, quote: quote, start: start)
            case 65..<80 where !client.ready.isEmpty:
                try send(client, kind: .book, quote: client.ready.removeLast(), start: start)
            case 80..<90 where !client.booked.isEmpty:
                try send(client, kind: .complete, quote: client.booked.removeFirst(), start: start)
            case 90..<100 where !client.ready.isEmpty:
                try send(client, kind: .cancel, quote: client.ready.removeFirst(), start: start)
            default:
                try send(client, kind: .submit, quote: 0, start: start)
            }
        }
    }

    private func send(_ client: Client, kind: RequestKind, quote: Int64, start: UInt64) throws {
        let id = nextID
        nextID += 1
        client.outstanding[id] = (kind, start, quote)
        _ = try client.socket.send(plan.factory.body(kind, id: id, quote: quote))
        result.sent += 1
        result.sentByKind[kind.rawValue] += 1
    }

    /// Contention: books the client's next prepared quote, starting its cycle.
    private func bookNext(_ client: Client, now: UInt64) {
        guard let quote = client.ready.first, now < end, result.cycles < plan.cycles else { return }
        client.ready.removeFirst()
        client.cycleStart = now
        try? send(client, kind: .book, quote: quote, start: now)
    }

    private func handle(_ reply: [UInt8], from client: Client, at now: UInt64) throws {
        let scan = ReplyScanner(bytes: reply)
        guard let id = scan.requestID, let request = client.outstanding.removeValue(forKey: id) else { return }
        result.replies += 1
        result.ack.record(nanoseconds: now &- request.start)
        guard scan.isOK else {
            let code = scan.errorCode.map(String.init) ?? "unknown"
            result.errors[code, default: 0] += 1
            if plan.workload == .contention, request.kind == .book {
                if code == "no_mechanic_available" && !plan.factory.wait {
                    try send(client, kind: .book, quote: request.quote, start: now)  // every mechanic busy: again
                } else {
                    bookNext(client, now: now)
                }
            }
            return
        }
        result.ok += 1
        result.okByKind[request.kind.rawValue] += 1
        switch request.kind {
        case .submit, .submitPending:
            guard let quote = scan.quoteID else { return }
            result.submitted.append((quote, request.start))
            if scan.state == "ready" && plan.workload == .mixed { client.ready.append(quote) }
        case .book:
            if plan.workload == .contention {
                if scan.state == "waiting" {
                    // Booked later, by a completion: its event says when.
                    result.waited += 1
                    if bookedEarly.remove(request.quote) == nil {
                        awaiting[request.quote] = clients.firstIndex { $0 === client }
                        return
                    }
                }
                try send(client, kind: .complete, quote: request.quote, start: now)
            } else {
                client.booked.append(request.quote)
            }
        case .complete:
            if plan.workload == .contention {
                result.cycles += 1
                result.cycle.record(nanoseconds: now &- client.cycleStart)
                bookNext(client, now: now)
            }
        case .submitInvalid, .get, .cancel:
            break
        }
    }
}

/// A small, fast, seeded random generator (SplitMix64), so that a mixed run is repeatable.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A failure of the benchmark itself (not of a request), with what went wrong.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
