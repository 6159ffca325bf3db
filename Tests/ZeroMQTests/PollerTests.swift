import Testing
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Polling several sockets")
struct PollerTests {
    @Test("a poll with nothing to read returns zero after its timeout")
    func pollTimesOut() throws {
        let context = try Context()
        let pull = try Socket(context, type: .pull)
        try pull.configureForTests()
        try pull.bind("tcp://127.0.0.1:*")
        var poller = Poller()
        let index = poller.register(pull)
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try poller.poll(timeout: .milliseconds(30)) == 0)
        #expect(clock.now - started >= .milliseconds(25), "the poll waited for its timeout")
        #expect(poller.events(at: index).isEmpty)
        #expect(try poller.poll(timeout: .zero) == 0)
    }

    @Test("a poll reports exactly the sockets that have messages")
    func pollReportsReadySockets() throws {
        let context = try Context()
        let first = try Socket(context, type: .pull)
        try first.configureForTests()
        try first.bind("tcp://127.0.0.1:*")
        let second = try Socket(context, type: .pull)
        try second.configureForTests()
        try second.bind("tcp://127.0.0.1:*")
        let push = try Socket(context, type: .push)
        try push.configureForTests()
        try push.connect(second.lastEndpoint)

        var poller = Poller()
        let firstIndex = poller.register(first)
        let secondIndex = poller.register(second)
        try push.send("hello")
        #expect(try poller.poll(timeout: .seconds(10)) == 1)
        #expect(!poller.isReadable(firstIndex))
        #expect(poller.isReadable(secondIndex))
        #expect(try second.receiveString(dontWait: true) == "hello")
    }

    @Test("a poll wakes for a plain file descriptor too")
    func pollWakesForFileDescriptor() throws {
        let context = try Context()
        let pull = try Socket(context, type: .pull)
        try pull.configureForTests()
        try pull.bind("tcp://127.0.0.1:*")
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        var poller = Poller()
        let socketIndex = poller.register(pull)
        let pipeIndex = poller.register(fileDescriptor: fds[0])
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        #expect(try poller.poll(timeout: .seconds(10)) == 1)
        #expect(poller.isReadable(pipeIndex))
        #expect(!poller.isReadable(socketIndex))
    }
}
