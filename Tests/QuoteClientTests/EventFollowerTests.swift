import Dispatch
import Foundation
import QuoteClient
import QuoteWire
import Synchronization
import Testing
import ZeroMQ

@Suite("The event follower")
struct EventFollowerTests {
    @Test(
        "a subscription refused at its handshake is made again after a pause, and events flow once the publisher accepts it"
    )
    func refusedSubscriptionIsMadeAgain() throws {
        var refusing: MismatchedServer? = try MismatchedServer()
        let events = try #require(refusing?.endpoint)
        let context = try Context()
        let stop = Atomic<Bool>(false)
        defer { stop.store(true, ordering: .relaxed) }

        // Commands: a ROUTER that answers every ping with seq 0.
        let commands = try TestRouter(answer: TestRouter.pong(to:))
        defer { commands.stop() }
        let commandEndpoint = commands.endpoint

        // The follower, on a thread of its own: it records notices and the first event.
        let notices = Mutex<[EventFollower.Notice]>([])
        let delivered = Mutex<[Int64]>([])
        let gotOne = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { finished.signal() }
            do {
                let client = try CommandClient(context: context, endpoint: commandEndpoint, timeout: .seconds(10))
                var follower = try EventFollower(context: context, client: client, events: events, since: nil)
                try follower.run(
                    deliver: { event in
                        delivered.withLock { $0.append(event.seq) }
                        gotOne.signal()
                        return false
                    }, notice: { notice in notices.withLock { $0.append(notice) } },
                    isStopped: { stop.load(ordering: .relaxed) })
            } catch {
                Issue.record("the follower failed: \(error)")
            }
        }

        // The subscriber finds the greeting does not match and hangs up; libzmq will not
        // connect there again by itself.
        #expect(refusing?.waitForHangUp(timeout: .seconds(10)) == true)
        refusing = nil
        // A publisher takes the port and publishes event 1 until the follower has it.
        let publisher = try Socket(context, type: .pub)
        try publisher.set(.linger, 0)
        try publisher.bind(events)
        let event = WireCodec().encode(WireEvent(seq: 1, type: "quote.ready", at: Date(), quoteId: 1))
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            try publisher.send(multipart: [Array("quote.ready".utf8), event], dontWait: true)
        } while gotOne.wait(timeout: .now() + .milliseconds(100)) == .timedOut && ContinuousClock.now < deadline
        stop.store(true, ordering: .relaxed)
        #expect(finished.wait(timeout: .now() + .seconds(10)) == .success, "the follower did not stop")
        #expect(delivered.withLock { $0 } == [1])
        #expect(
            notices.withLock { $0 }.contains { notice in
                if case .refused(let endpoint, let retry) = notice {
                    endpoint == events && retry == .seconds(1)
                } else {
                    false
                }
            }, "\(notices.withLock { $0 })")
    }
}
