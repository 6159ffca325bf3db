import Testing
import ZeroMQ

@Suite("Publish and subscribe")
struct PubSubTests {
    @Test("a subscriber receives only the topics its prefixes match, in publishing order")
    func prefixFilters() throws {
        let context = try Context()
        // XPUB shows when each subscription has reached the publisher: the slow joiner is
        // handled by waiting for that, not by sleeping.
        let publisher = try Socket(context, type: .xpub)
        try publisher.configureForTests()
        try publisher.bind("tcp://127.0.0.1:*")
        let subscriber = try Socket(context, type: .sub)
        try subscriber.configureForTests()
        try subscriber.set(.subscribe, Array("quote.booked".utf8))
        try subscriber.set(.subscribe, Array("mechanic.".utf8))
        try subscriber.connect(publisher.lastEndpoint)

        var subscriptions: Set<String> = []
        while subscriptions.count < 2 {
            let frame = try #require(try publisher.receive())
            #expect(frame.first == 1, "a subscribe message starts with 1")
            subscriptions.insert(String(decoding: frame.dropFirst(), as: UTF8.self))
        }
        #expect(subscriptions == ["quote.booked", "mechanic."])

        let published = ["quote.ready", "quote.booked", "mechanic.busy", "quote.bookedx", "mechanic", "mechanic.free"]
        for (index, topic) in published.enumerated() {
            // As an array of frames and as two frames given apart: the same message.
            if index.isMultiple(of: 2) {
                try publisher.send(multipart: [Array(topic.utf8), Array("\(index)".utf8)])
            } else {
                try publisher.send(multipart: Array(topic.utf8), Array("\(index)".utf8))
            }
        }
        try publisher.send(multipart: Array("mechanic.end".utf8), [])

        var received: [String] = []
        while true {
            let message = try #require(try subscriber.receiveMultipart())
            #expect(message.frames.count == 2)
            let topic = String(decoding: message.frames[0], as: UTF8.self)
            if topic == "mechanic.end" { break }
            received.append(topic + " " + String(decoding: message.frames[1], as: UTF8.self))
        }
        #expect(received == ["quote.booked 1", "mechanic.busy 2", "quote.bookedx 3", "mechanic.free 5"])
    }

    @Test("a plain PUB reaches a late subscriber once the subscription has propagated")
    func slowJoinerWithPlainPub() throws {
        let context = try Context()
        let publisher = try Socket(context, type: .pub)
        try publisher.configureForTests()
        try publisher.bind("tcp://127.0.0.1:*")
        let subscriber = try Socket(context, type: .sub)
        try subscriber.configureForTests()
        try subscriber.set(.subscribe, Array("probe".utf8))
        try subscriber.set(.subscribe, Array("data".utf8))
        try subscriber.connect(publisher.lastEndpoint)

        // Probe until one arrives: the condition that the subscription is in place.
        var poller = Poller()
        poller.register(subscriber)
        var probes = 0
        while true {
            try publisher.send(multipart: [Array("probe".utf8), []])
            probes += 1
            if try poller.poll(timeout: .milliseconds(10)) > 0 { break }
            try #require(probes < 1_000, "the subscription never reached the publisher")
        }
        for index in 0..<100 {
            try publisher.send(multipart: [Array("data".utf8), Array("\(index)".utf8)])
        }
        var data: [String] = []
        while data.count < 100 {
            let message = try #require(try subscriber.receiveMultipart())
            if message.frames[0] == Array("data".utf8) {
                data.append(String(decoding: message.frames[1], as: UTF8.self))
            }
        }
        #expect(data == (0..<100).map { "\($0)" })
    }
}
