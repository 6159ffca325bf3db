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
}
