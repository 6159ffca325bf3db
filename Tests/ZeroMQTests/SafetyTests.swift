import Testing
import ZeroMQ

@Suite("Limits, shutdown and errors")
struct SafetyTests {
    @Test("a peer sending more than ZMQ_MAXMSGSIZE is disconnected and its message never delivered")
    func maxMessageSizeDropsOversizedPeer() throws {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.set(.maxMessageSize, 1_024)
        let monitor = try router.openMonitor(events: [.accepted, .disconnected])
        defer { router.stopMonitor() }
        try monitor.configureForTests()
        try router.bind("tcp://127.0.0.1:*")

        let offender = try Socket(context, type: .dealer)
        try offender.configureForTests()
        try offender.set(.reconnectInterval, 60_000)
        try offender.connect(router.lastEndpoint)
        try offender.send(multipart: [[], [UInt8](repeating: 7, count: 4_096)])

        var sawDisconnect = false
        while !sawDisconnect {
            let event = try #require(try monitor.receiveMonitorEvent())
            sawDisconnect = event.event == .disconnected
        }
        #expect(try router.receive(dontWait: true) == nil, "the oversized message was not delivered")

        let polite = try Socket(context, type: .dealer)
        try polite.configureForTests()
        try polite.connect(router.lastEndpoint)
        try polite.send(multipart: [[], [UInt8](repeating: 1, count: 1_000)])
        let message = try #require(try router.receiveMultipart())
        #expect(message.frames.last?.count == 1_000)
    }

    @Test("closing a socket with queued messages and linger 0 returns at once, and so does the context")
    func lingerZeroDoesNotHang() throws {
        // Find a port nobody listens on by binding and unbinding it.
        let endpoint: String
        do {
            let probeContext = try Context()
            let probe = try Socket(probeContext, type: .pull)
            try probe.set(.linger, 0)
            try probe.bind("tcp://127.0.0.1:*")
            endpoint = probe.lastEndpoint
        }
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            let context = try Context()
            let dealer = try Socket(context, type: .dealer)
            try dealer.set(.sendHighWaterMark, 100_000)
            try dealer.connect(endpoint)
            var queued = 0
            for _ in 0..<1_000 where try dealer.send([UInt8](repeating: 1, count: 300), dontWait: true) {
                queued += 1
            }
            #expect(queued == 1_000, "messages queue for a peer that is not there yet")
            dealer.close(linger: .zero)
        }
        // Generous bound: a hang would be forever (the default linger is infinite).
        #expect(elapsed < .seconds(30))
    }

    @Test("errors carry errno, libzmq's text and the failing call")
    func typedErrors() throws {
        let context = try Context()
        let first = try Socket(context, type: .rep)
        try first.set(.linger, 0)
        try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(context, type: .rep)
        try second.set(.linger, 0)
        let inUse = #expect(throws: ZeroMQError.self) { try second.bind(first.lastEndpoint) }
        #expect(inUse?.code == .addressInUse)
        #expect(inUse?.message.isEmpty == false)
        #expect(inUse?.operation.contains(first.lastEndpoint) == true)

        let bad = #expect(throws: ZeroMQError.self) { try second.bind("nonsense://here") }
        #expect(bad?.code == .protocolNotSupported)

        let req = try Socket(context, type: .req)
        try req.set(.linger, 0)
        try req.connect(first.lastEndpoint)
        try req.send("one")
        let twice = #expect(throws: ZeroMQError.self) { try req.send("two") }
        #expect(twice?.code == .invalidState)
    }

    @Test("options read back what was set")
    func optionsRoundTrip() throws {
        let context = try Context()
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.sendHighWaterMark, 1_234)
        try socket.set(.receiveHighWaterMark, 4_321)
        try socket.set(.maxMessageSize, 65_536)
        try socket.set(.immediate, true)
        try socket.set(.routingId, Array("me".utf8))
        try socket.set(.heartbeatInterval, 1_000)
        try socket.set(.heartbeatTimeout, 3_000)
        try socket.set(.heartbeatTTL, 5_000)
        #expect(try socket.get(.sendHighWaterMark) == 1_234)
        #expect(try socket.get(.receiveHighWaterMark) == 4_321)
        #expect(try socket.get(.maxMessageSize) == 65_536)
        #expect(try socket.get(.immediate) == true)
        #expect(try socket.get(.routingId) == Array("me".utf8))
        #expect(try socket.get(.heartbeatInterval) == 1_000)
        #expect(try socket.get(.heartbeatTimeout) == 3_000)
        #expect(try socket.get(.heartbeatTTL) == 5_000)
    }

    @Test("context shutdown makes a blocked receive fail with terminated")
    func contextShutdownUnblocks() throws {
        let context = try Context()
        let pull = try Socket(context, type: .pull)
        try pull.set(.linger, 0)
        try pull.bind("inproc://shutdown")
        context.shutdown()
        let error = #expect(throws: ZeroMQError.self) { try pull.receive() }
        #expect(error?.code == .terminated)
    }
}
