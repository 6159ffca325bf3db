import Testing
import ZeroMQ

@Suite("Round trips over loopback TCP")
struct RoundTripTests {
    let context: Context

    init() throws {
        context = try Context()
    }

    @Test("a REQ request reaches REP and its reply comes back")
    func reqRepRoundTrip() throws {
        let rep = try Socket(context, type: .rep)
        try rep.configureForTests()
        try rep.bind("tcp://127.0.0.1:*")
        let req = try Socket(context, type: .req)
        try req.configureForTests()
        try req.connect(rep.lastEndpoint)

        try req.send("ping")
        #expect(try rep.receiveString() == "ping")
        try rep.send("pong")
        #expect(try req.receiveString() == "pong")
    }

    @Test("ROUTER sees a DEALER's routing id and empty delimiter, and routes the reply back by it")
    func routerDealerIdentities() throws {
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.bind("tcp://127.0.0.1:*")

        let alice = try Socket(context, type: .dealer)
        try alice.configureForTests()
        try alice.set(.routingId, Array("alice".utf8))
        try alice.connect(router.lastEndpoint)
        let bob = try Socket(context, type: .dealer)
        try bob.configureForTests()
        try bob.set(.routingId, Array("bob".utf8))
        try bob.connect(router.lastEndpoint)

        try alice.send(multipart: [[], Array("from alice".utf8)])
        try bob.send(multipart: [[], Array("from bob".utf8)])

        var seen: [String: String] = [:]
        for _ in 0..<2 {
            let message = try #require(try router.receiveMultipart())
            #expect(message.frames.count == 3)
            #expect(message.frames[1].isEmpty, "the empty delimiter comes through untouched")
            seen[String(decoding: message.frames[0], as: UTF8.self)] = String(
                decoding: message.frames[2], as: UTF8.self)
        }
        #expect(seen == ["alice": "from alice", "bob": "from bob"])

        try router.send(multipart: [Array("bob".utf8), [], Array("for bob".utf8)])
        try router.send(multipart: [Array("alice".utf8), [], Array("for alice".utf8)])
        #expect(try bob.receiveMultipart()?.frames == [[], Array("for bob".utf8)])
        #expect(try alice.receiveMultipart()?.frames == [[], Array("for alice".utf8)])
    }

    @Test("a REQ client talking to a ROUTER arrives as identity, empty delimiter, body")
    func reqToRouterEnvelope() throws {
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.bind("tcp://127.0.0.1:*")
        let req = try Socket(context, type: .req)
        try req.configureForTests()
        try req.connect(router.lastEndpoint)

        try req.send("hello")
        let message = try #require(try router.receiveMultipart())
        #expect(message.frames.count == 3)
        #expect(!message.frames[0].isEmpty)
        #expect(message.frames[1] == [])
        #expect(message.frames[2] == Array("hello".utf8))
        try router.send(multipart: [message.frames[0], [], Array("world".utf8)])
        #expect(try req.receiveString() == "world")
    }

    /// Runs `body` with a PUSH connected to a PULL over loopback TCP.
    private func withPushPull(_ body: (borrowing Socket, borrowing Socket) throws -> Void) throws {
        let pull = try Socket(context, type: .pull)
        try pull.configureForTests()
        try pull.bind("tcp://127.0.0.1:*")
        let push = try Socket(context, type: .push)
        try push.configureForTests()
        try push.connect(pull.lastEndpoint)
        try body(push, pull)
    }

    @Test("multipart messages arrive whole, in order, byte for byte", arguments: [1, 2, 7, 64])
    func multipartIntegrity(frameCount: Int) throws {
        try withPushPull { push, pull in try multipartRoundTrip(frameCount: frameCount, push, pull) }
    }

    private func multipartRoundTrip(frameCount: Int, _ push: borrowing Socket, _ pull: borrowing Socket) throws {

        let sizes = [0, 1, 29, 30, 31, 255, 256, 4096, 65_537, 1 << 20]
        let frames = (0..<frameCount).map { index in
            let size = sizes[index % sizes.count]
            return (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
        }
        for _ in 0..<3 { try push.send(multipart: frames) }
        for _ in 0..<3 {
            let message = try #require(try pull.receiveMultipart())
            #expect(message.frames == frames)
        }
    }

    @Test("frames past the receiver's maximum are dropped uncopied, and the next message arrives whole")
    func framesPastTheMaximum() throws {
        try withPushPull { push, pull in
            try push.send(multipart: (0..<100).map { [UInt8($0)] })
            try push.send(multipart: [[7], [8]])
            let cut = try #require(try pull.receiveMultipart(maximumFrames: 5))
            #expect(cut.frames == (0..<5).map { [UInt8($0)] })
            #expect(cut.droppedFrames == 95)
            let next = try #require(try pull.receiveMultipart(maximumFrames: 5))
            #expect(next.frames == [[7], [8]])
            #expect(next.droppedFrames == 0)
        }
    }

    @Test("a receive with nothing waiting returns nil without blocking, and a timed one throws a timeout")
    func receiveTimeouts() throws {
        let pull = try Socket(context, type: .pull)
        try pull.set(.linger, 0)
        try pull.bind("tcp://127.0.0.1:*")
        #expect(try pull.receive(dontWait: true) == nil)
        try pull.set(.receiveTimeout, 20)
        let error = #expect(throws: ZeroMQError.self) { try pull.receive() }
        #expect(error?.code == .timeout)
    }
}

extension Socket {
    /// Bounded waits and no lingering, so a failing test fails instead of hanging.
    func configureForTests() throws(ZeroMQError) {
        try set(.linger, 0)
        try set(.receiveTimeout, 10_000)
        try set(.sendTimeout, 10_000)
    }
}

@Suite("Zero-copy messages")
struct MessageTests {
    @Test("a ROUTER forwards received frames back without copying them out, and they arrive intact")
    func forwardWithoutCopy() throws {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.bind("tcp://127.0.0.1:*")
        let dealer = try Socket(context, type: .dealer)
        try dealer.configureForTests()
        try dealer.connect(router.lastEndpoint)

        let payload = (0..<1_000).map { UInt8(truncatingIfNeeded: $0) }
        try dealer.send(payload)
        var identity = Message()
        var body = Message()
        #expect(try router.receive(&identity))
        let identityHasMore = identity.hasMore
        #expect(identityHasMore)
        #expect(try router.receive(&body))
        let bodyHasMore = body.hasMore
        let bodyCount = body.count
        let bodyBytes = body.withUnsafeBytes { Array($0) }
        let peer = body.metadata("Peer-Address")
        #expect(!bodyHasMore)
        #expect(bodyCount == 1_000)
        #expect(bodyBytes == payload)
        #expect(peer == "127.0.0.1")
        #expect(try router.send(&identity, more: true))
        #expect(try router.send(&body))
        let emptied = body.count
        #expect(emptied == 0, "a sent message is left empty")
        #expect(try dealer.receive() == payload)

        var nothing = Message()
        #expect(try router.receive(&nothing, dontWait: true) == false)
        var copy = Message(payload)
        let copied = copy.bytes
        #expect(copied == payload)
    }
}
