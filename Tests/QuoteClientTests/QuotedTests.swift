import Dispatch
import Foundation
import QuoteClient
import Synchronization
import Testing
import ZeroMQ

@Suite("The async client")
struct QuotedTests {
    @Test(
        "a caller cancelled while its request waits behind another's is answered at once, and its request is never sent",
        .timeLimit(.minutes(2)))
    func cancelledWhileQueued() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let quoted = try Quoted(.init(endpoints: [server.endpoint], timeout: .seconds(5), retries: 0))
        let first = Task { () -> QuotedError.Code? in
            do throws(QuotedError) {
                _ = try await quoted.ping()
                return nil
            } catch {
                return error.code
            }
        }
        // The first request is out: the client's one thread waits for its reply. (Awaited, not
        // waited for: a blocked thread of the cooperative pool could hold up the task above.)
        var arrivals = server.arrivals.makeAsyncIterator()
        #expect(await arrivals.next() != nil)
        let second = Task { () -> QuotedError.Code? in
            do throws(QuotedError) {
                _ = try await quoted.ping()
                return nil
            } catch {
                return error.code
            }
        }
        second.cancel()
        #expect(await second.value == .cancelled)
        #expect(await first.value == .timedOut)
        #expect(server.requests == 1, "the cancelled request was sent")
    }
}

/// A ROUTER on loopback, on a thread of its own, that counts the requests it receives and
/// answers none.
private final class SilentServer: Sendable {
    let endpoint: String
    /// One element per request received.
    let arrivals: AsyncStream<Void>
    private let shared = Shared()

    /// What the server's thread and the test share.
    private final class Shared: Sendable {
        let count = Mutex(0)
        let stopped = Atomic<Bool>(false)
    }

    init() throws {
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
                while (try? router.receiveMultipart(dontWait: true)) != nil {
                    shared.count.withLock { $0 += 1 }
                    arrived.yield()
                }
            }
        }
        _ = ready.wait(timeout: .now() + .seconds(10))
        guard let endpoint = bound.withLock({ $0 }) else { throw POSIXError(.EADDRNOTAVAIL) }
        self.endpoint = endpoint
    }

    var requests: Int { shared.count.withLock { $0 } }

    func stop() { shared.stopped.store(true, ordering: .relaxed) }
}
