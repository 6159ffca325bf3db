import Foundation
import QuoteWire
import Synchronization
import ZeroMQ

/// Subscribers to quoted's events, all on one thread of their own: the first records when
/// each quote's first event arrived (for submit -> event); every one counts what it got.
final class EventTap: Sendable {
    private let counts: Mutex<[Int]>
    private let subscribers: Int
    private let stopping = Atomic<Bool>(false)
    private let firstSeen = Mutex<[Int64: UInt64]>([:])
    /// The highest quote id the first subscriber has seen an event of.
    private let highestQuote = Atomic<Int64>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let failure = Mutex<String?>(nil)

    /// Starts `subscribers` SUB sockets on `events`, each subscribed to everything, with
    /// `curve` keys when given.
    init(context: Context, events: String, subscribers: Int, curve: BenchKeys? = nil) {
        counts = Mutex(Array(repeating: 0, count: subscribers))
        self.subscribers = subscribers
        guard subscribers > 0 else {
            finished.signal()
            return
        }
        let thread = Thread { [self] in
            defer { finished.signal() }
            do {
                try listen(context: context, events: events, curve: curve)
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
        }
        thread.start()
    }

    private func listen(context: Context, events: String, curve: BenchKeys?) throws {
        final class Subscriber {
            let socket: Socket
            init(socket: consuming Socket) { self.socket = socket }
        }
        var poller = Poller()
        var subscribers: [Subscriber] = []
        for _ in 0..<self.subscribers {
            let socket = try Socket(context, type: .sub)
            try curve?.configure(socket)
            try socket.set(.linger, 0)
            try socket.set(.receiveHighWaterMark, 1_000_000)
            try socket.set(.subscribe, [])
            try socket.connect(events)
            let subscriber = Subscriber(socket: socket)
            poller.register(subscriber.socket)
            subscribers.append(subscriber)
        }
        var seen: [Int64: UInt64] = [:]
        var message = Message()
        while !stopping.load(ordering: .relaxed) {
            guard try poller.poll(timeout: .milliseconds(50)) > 0 else { continue }
            let now = monotonicNanos()
            for (index, subscriber) in subscribers.enumerated() where poller.isReadable(index) {
                var received = 0
                while try subscriber.socket.receive(&message, dontWait: true) {
                    guard !message.hasMore else { continue }  // the topic frame
                    received += 1
                    if index == 0, let quote = ReplyScanner(bytes: message.bytes).eventQuoteID, seen[quote] == nil {
                        seen[quote] = now
                        if quote > highestQuote.load(ordering: .relaxed) {
                            highestQuote.store(quote, ordering: .relaxed)
                        }
                    }
                }
                counts.withLock { $0[index] += received }
            }
        }
        firstSeen.withLock { $0 = seen }
    }

    /// Events each subscriber has received so far.
    var received: [Int] { counts.withLock { $0 } }

    /// Waits until every subscriber has received at least `count` events, or `timeout` passes.
    func waitUntilEach(received count: Int, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if received.allSatisfy({ $0 >= count }) { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return received.allSatisfy { $0 >= count }
    }

    /// Waits until the first subscriber has seen an event of quote `id` (ids grow in commit
    /// order and events leave in that order, so every earlier event has arrived or was
    /// dropped by then), or `timeout` passes.
    func waitUntilSeen(quote id: Int64, timeout: Duration) {
        guard subscribers > 0 else { return }
        let deadline = ContinuousClock.now + timeout
        while highestQuote.load(ordering: .relaxed) < id && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// Stops the thread and returns, per quote, when its first event arrived.
    func stop() throws -> [Int64: UInt64] {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
        if let failure = failure.withLock({ $0 }) { throw BenchError("subscriber failed: \(failure)") }
        return firstSeen.withLock { $0 }
    }
}
