import Testing
import ZeroMQ

@Suite("Socket monitors")
struct MonitorTests {
    /// Connects a peer to `router`, has it deliver one message, and closes it.
    private func visit(_ context: Context, _ router: borrowing Socket, _ body: [UInt8]) throws {
        let peer = try Socket(context, type: .dealer)
        try peer.configureForTests()
        try peer.connect(router.lastEndpoint)
        try peer.send(multipart: [[], body])
        let message = try #require(try router.receiveMultipart())
        #expect(message.frames.last == body)
    }

    @Test("a monitor read by no one never stalls the connections of its context", .timeLimit(.minutes(1)))
    func unreadMonitorNeverStalls() throws {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.bind("tcp://127.0.0.1:*")
        let monitor = try router.openMonitor(events: .all)
        defer { router.stopMonitor() }
        // Far more events than libzmq's default queue of a thousand each way would hold:
        // were they bounded, its I/O thread would wait on this reader, and the router
        // would stop receiving.
        for index in 0..<700 {
            try visit(context, router, Array("visit \(index)".utf8))
        }
        var events = 0
        while try monitor.receiveMonitorEvent(dontWait: true) != nil { events += 1 }
        #expect(events > 2_000)
    }

    @Test("a monitor stopped before its reader closes leaves its socket working")
    func stoppedMonitorLeavesSocketWorking() throws {
        let context = try Context()
        let router = try Socket(context, type: .router)
        try router.configureForTests()
        try router.bind("tcp://127.0.0.1:*")
        do {
            let monitor = try router.openMonitor(events: .all)
            try visit(context, router, Array("seen".utf8))
            #expect(try monitor.receiveMonitorEvent()?.event == .accepted)
            router.stopMonitor()
        }
        // With the reader gone, events that would have been sent to it are not.
        for index in 0..<20 {
            try visit(context, router, Array("unseen \(index)".utf8))
        }
        let another = try router.openMonitor(events: [.accepted])
        defer { router.stopMonitor() }
        try visit(context, router, Array("seen again".utf8))
        #expect(try another.receiveMonitorEvent()?.event == .accepted)
    }
}
