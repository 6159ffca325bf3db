/// An event as the PUB socket sends it: its topic frame, then its JSON body, numbered by its
/// `seq`. Two frames held apart, not an array of them: an array would be one more allocation
/// for every event published.
public struct PublishedEvent: Sendable, Hashable {
    /// The event's number in the log.
    public var seq: Int64
    /// The first frame: the event's type (`quote.ready`), what subscribers filter on.
    public var topic: [UInt8]
    /// The second frame: the event as JSON.
    public var body: [UInt8]

    /// The event numbered `seq`, with its `topic` and `body` frames.
    public init(seq: Int64, topic: [UInt8], body: [UInt8]) {
        self.seq = seq
        self.topic = topic
        self.body = body
    }

    /// How many bytes the two frames hold.
    public var byteCount: Int { topic.count + body.count }
}
