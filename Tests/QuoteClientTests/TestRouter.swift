import Dispatch
import Foundation
import Synchronization
import ZeroMQ

/// A ROUTER on loopback, on a thread of its own (its socket never leaves it), that counts the
/// requests it receives and answers each with what `answer` makes of its body: none when it
/// returns `nil`, as a server that never replies.
final class TestRouter: Sendable {
    /// Where it listens: `tcp://127.0.0.1:PORT`.
    let endpoint: String
    /// One element per request received.
    let arrivals: AsyncStream<Void>
    private let shared = Shared()

    /// What the router's thread and the test share.
    private final class Shared: Sendable {
        let count = Mutex(0)
        let stopped = Atomic<Bool>(false)
    }

    init(answer: @escaping @Sendable ([UInt8]) -> [UInt8]? = { _ in nil }) throws {
        let bound = Mutex<String?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let context = try Context()
        let shared = shared
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        self.arrivals = arrivals
        Thread.detachNewThread {
            defer { arrived.finish() }
            guard let router = try? Socket(context, type: .router), (try? router.set(.linger, 0)) != nil,
                (try? router.bind("tcp://127.0.0.1:0")) != nil
            else {
                ready.signal()
                return
            }
            bound.withLock { $0 = router.lastEndpoint }
            ready.signal()
            var poller = Poller()
            poller.register(router)
            while !shared.stopped.load(ordering: .relaxed) {
                guard (try? poller.poll(timeout: .milliseconds(100))) ?? 0 > 0 else { continue }
                while let request = try? router.receiveMultipart(dontWait: true), let body = request.frames.last {
                    shared.count.withLock { $0 += 1 }
                    arrived.yield()
                    if let reply = answer(body) {
                        _ = try? router.send(multipart: [request.frames[0], [], reply], dontWait: true)
                    }
                }
            }
        }
        _ = ready.wait(timeout: .now() + .seconds(10))
        guard let endpoint = bound.withLock({ $0 }) else { throw POSIXError(.EADDRNOTAVAIL) }
        self.endpoint = endpoint
    }

    /// How many requests have come.
    var requests: Int { shared.count.withLock { $0 } }

    /// Ends the router's thread.
    func stop() { shared.stopped.store(true, ordering: .relaxed) }

    /// The answer to a `ping` request's `body`: a pong with its id (the log at seq 0); `nil`
    /// for a body without one.
    static func pong(to body: [UInt8]) -> [UInt8]? {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        guard let id = object?["id"] as? String else { return nil }
        return Array(#"{"v":1,"id":"\#(id)","ok":true,"pong":true}"#.utf8)
    }
}
