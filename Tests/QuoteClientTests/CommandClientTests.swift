import Dispatch
import Foundation
import QuoteClient
import QuoteWire
import Synchronization
import Testing
import ZeroMQ

@Suite("The command client")
struct CommandClientTests {
    @Test(
        "a request to daemons that are all down fails by its deadline: with several endpoints nothing can queue it, and the send must not block for good",
        .timeLimit(.minutes(1)))
    func allDaemonsDown() throws {
        let context = try Context()
        // Nothing listens on these: every connection is refused, and none completes.
        let client = try CommandClient(
            context: context, endpoint: "tcp://127.0.0.1:1,tcp://127.0.0.1:2", timeout: .milliseconds(300))
        let error = try #require(throws: QuotedError.self) { try client.call(.ping) }
        #expect(error.code == .timedOut, "\(error)")
    }

    @Test(
        "a call given a deadline ends by it, whatever its timeout and retries: what the async client's callers queued behind others are held to"
    )
    func deadlineCutsTheAttempts() throws {
        let context = try Context()
        // Nothing listens there: every attempt goes unanswered for as long as it may.
        let client = try CommandClient(context: context, endpoint: "tcp://127.0.0.1:1", timeout: .seconds(5))
        let clock = ContinuousClock()
        let started = clock.now
        let error = try #require(throws: QuotedError.self) {
            try client.call(.ping, retries: 3, deadline: started + .milliseconds(200))
        }
        #expect(error.code == .timedOut)
        // Without the deadline: four attempts of 5 s.
        #expect(clock.now - started < .seconds(5), "took \(clock.now - started)")
    }

    @Test(
        "a reply that comes after its attempt timed out still answers the call, during the next attempt: a retry keeps a connection that is still there"
    )
    func lateReplyAnswersTheRetry() throws {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        try router.bind("tcp://127.0.0.1:0")
        let endpoint = router.lastEndpoint
        let outcome = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            do {
                let client = try CommandClient(context: context, endpoint: endpoint, timeout: .milliseconds(500))
                let reply = try client.call(.ping, retries: 3)
                outcome.withLock { $0 = reply.ok ? "answered" : "refused" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        // The first attempt is answered only once the second has come: late.
        var poller = Poller()
        poller.register(router)
        var received: [[[UInt8]]] = []
        while received.count < 2, try poller.poll(timeout: .seconds(20)) > 0 {
            while let message = try router.receiveMultipart(dontWait: true) { received.append(message.frames) }
        }
        try #require(received.count >= 2, "the call was not sent again")
        let first = received[0]
        let pong = try #require(TestRouter.pong(to: first[first.count - 1]))
        try router.send(multipart: [first[0], [], pong])
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
        #expect(outcome.withLock { $0 } == "answered")
    }

    @Test(
        "a request on a connection libzmq dropped for good (its handshake failed) fails by its deadline instead of blocking"
    )
    func droppedConnection() throws {
        let server = try MismatchedServer()
        let context = try Context()
        // The client's socket stays on one thread; this one waits for it with a deadline, so a
        // send that blocks for good fails the test instead of hanging it.
        let outcomes = Mutex<[QuotedError.Code]>([])
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            do {
                let client = try CommandClient(context: context, endpoint: server.endpoint, timeout: .milliseconds(300))
                // A client without keys finds the server speaks CURVE and hangs up; then the
                // DEALER has no connection left to queue a request for.
                guard server.waitForHangUp(timeout: .seconds(10)) else { return }
                for _ in 0..<2 {
                    do throws(QuotedError) {
                        _ = try client.call(.ping)
                    } catch {
                        outcomes.withLock { $0.append(error.code) }
                    }
                }
            } catch {
                outcomes.withLock { $0.append(.internal) }
            }
        }
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success, "a request blocked for good")
        #expect(outcomes.withLock { $0 } == [.timedOut, .timedOut])
    }

    @Test(
        "a client whose connection libzmq dropped for good talks again once the server accepts it: the next request goes out on a fresh connection"
    )
    func recoversAfterDroppedConnection() throws {
        var refusing: MismatchedServer? = try MismatchedServer()
        let endpoint = try #require(refusing?.endpoint)
        let context = try Context()
        let outcomes = Mutex<[String]>([])
        let dropped = DispatchSemaphore(value: 0)
        let refused = DispatchSemaphore(value: 0)
        let serving = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { done.signal() }
            func record(_ outcome: String) { outcomes.withLock { $0.append(outcome) } }
            do {
                let client = try CommandClient(context: context, endpoint: endpoint, timeout: .milliseconds(300))
                guard dropped.wait(timeout: .now() + .seconds(10)) == .success else { return record("no hang-up") }
                do throws(QuotedError) {
                    _ = try client.call(.ping)
                    record("answered")
                } catch {
                    record("\(error.code)")
                }
                refused.signal()
                guard serving.wait(timeout: .now() + .seconds(10)) == .success else { return record("no server") }
                do throws(QuotedError) {
                    let reply = try client.call(.ping, retries: 20)
                    record(reply.ok ? "answered" : "refused")
                } catch {
                    record("\(error.code)")
                }
            } catch {
                record("\(error)")
            }
        }
        // The client finds the greeting does not match and hangs up, for good.
        #expect(refusing?.waitForHangUp(timeout: .seconds(10)) == true)
        dropped.signal()
        #expect(refused.wait(timeout: .now() + .seconds(30)) == .success, "the first request never ended")

        // The refusing server goes; a real one takes its port and answers one ping.
        refusing = nil
        let router = try Socket(context, type: .router)
        try router.set(.linger, 0)
        try router.bind(endpoint)
        serving.signal()
        var poller = Poller()
        poller.register(router)
        let served = try poller.poll(timeout: .seconds(20)) > 0
        #expect(served, "the client never sent again")
        if served, let request = try router.receiveMultipart(dontWait: true), let body = request.frames.last {
            try router.send(multipart: [request.frames[0], [], try #require(TestRouter.pong(to: body))])
        }
        #expect(done.wait(timeout: .now() + .seconds(30)) == .success, "the second request never ended")
        #expect(outcomes.withLock { $0 } == ["timed out", "answered"])
    }
}
