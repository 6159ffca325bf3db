import Testing
import ZeroMQ

@Suite("CURVE encryption, ZAP metadata and Z85")
struct CurveTests {
    @Test("Z85 matches the RFC 32 test vector and round-trips keys")
    func z85() throws {
        let helloWorld: [UInt8] = [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]
        #expect(try Z85.encode(helloWorld) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == helloWorld)
        let keys = try CurveKeyPair.generate()
        #expect(keys.publicKey.count == 32)
        #expect(keys.secretKey.count == 32)
        #expect(try Z85.decode(Z85.encode(keys.publicKey)) == keys.publicKey)
        #expect(throws: ZeroMQError.self) { try Z85.encode([1, 2, 3]) }
        #expect(throws: ZeroMQError.self) { try Z85.decode("bad") }
    }

    @Test("a key pair is derived again from its secret key alone")
    func derivePublicKey() throws {
        let keys = try CurveKeyPair.generate()
        #expect(try CurveKeyPair(secretKey: keys.secretKey) == keys)
    }

    @Test("the handshake succeeds with the right server key, and ZAP's User-Id reaches the message")
    func handshakeWithRightKey() throws {
        try #require(Context.has("curve"))
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        let clientKeys = try CurveKeyPair.generate()

        // A minimal ZAP handler (RFC 27) that names the client "operator".
        let zap = try Socket(context, type: .rep)
        try zap.configureForTests()
        try zap.bind("inproc://zeromq.zap.01")

        let server = try Socket(context, type: .router)
        try server.configureForTests()
        try server.set(.curveServer, true)
        try server.set(.curveSecretKey, serverKeys.secretKey)
        try server.set(.zapDomain, "quoted")
        try server.bind("tcp://127.0.0.1:*")

        let client = try Socket(context, type: .req)
        try client.configureForTests()
        try client.set(.curveServerKey, serverKeys.publicKey)
        try client.set(.curvePublicKey, clientKeys.publicKey)
        try client.set(.curveSecretKey, clientKeys.secretKey)
        try client.connect(server.lastEndpoint)
        try client.send("hello")

        var poller = Poller()
        let zapIndex = poller.register(zap)
        let serverIndex = poller.register(server)
        var request: Multipart?
        var zapRequests = 0
        while request == nil {
            try #require(try poller.poll(timeout: .seconds(10)) > 0, "neither ZAP nor the server heard anything")
            if poller.isReadable(zapIndex) {
                let zapRequest = try #require(try zap.receiveMultipart())
                zapRequests += 1
                #expect(zapRequest.frames.count == 7)
                #expect(zapRequest.frames[5] == Array("CURVE".utf8))
                #expect(zapRequest.frames[6] == clientKeys.publicKey, "ZAP sees the client's public key")
                let reply: [[UInt8]] = [
                    Array("1.0".utf8), zapRequest.frames[1], Array("200".utf8), Array("OK".utf8),
                    Array("operator".utf8), [],
                ]
                try zap.send(multipart: reply)
            }
            if poller.isReadable(serverIndex) {
                request = try server.receiveMultipart(metadata: ["User-Id", "Peer-Address"])
            }
        }
        let received = try #require(request)
        #expect(zapRequests == 1)
        #expect(received.frames.last == Array("hello".utf8))
        #expect(received.metadata["User-Id"] == "operator")
        #expect(received.metadata["Peer-Address"] == "127.0.0.1")
        try server.send(multipart: [received.frames[0], [], Array("welcome".utf8)])
        #expect(try client.receiveString() == "welcome")
    }

    @Test("the handshake fails with a wrong server key, and nothing is delivered")
    func handshakeWithWrongKey() throws {
        try #require(Context.has("curve"))
        let context = try Context()
        let serverKeys = try CurveKeyPair.generate()
        let impostorKeys = try CurveKeyPair.generate()
        let clientKeys = try CurveKeyPair.generate()

        let server = try Socket(context, type: .router)
        try server.configureForTests()
        try server.set(.curveServer, true)
        try server.set(.curveSecretKey, serverKeys.secretKey)
        let monitor = try server.openMonitor(events: [.handshakeFailed, .handshakeSucceeded])
        defer { server.stopMonitor() }
        try monitor.configureForTests()
        try server.bind("tcp://127.0.0.1:*")

        let client = try Socket(context, type: .dealer)
        try client.configureForTests()
        try client.set(.curveServerKey, impostorKeys.publicKey)
        try client.set(.curvePublicKey, clientKeys.publicKey)
        try client.set(.curveSecretKey, clientKeys.secretKey)
        try client.connect(server.lastEndpoint)
        try client.send(multipart: [[], Array("let me in".utf8)])

        let event = try #require(try monitor.receiveMonitorEvent())
        #expect(MonitorEvents.handshakeFailed.contains(event.event), "got \(event.event) instead")
        #expect(try server.receive(dontWait: true) == nil)
    }
}
