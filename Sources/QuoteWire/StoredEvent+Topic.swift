import QuoteStore

extension StoredEvent {
    /// The first frame of the message it is published as: the bytes of its `type`.
    /// One array per type, made once and shared by every event of that type: a frame made
    /// per event would be an allocation, and two are published for every submission.
    var topicFrame: [UInt8] { Self.topicFrames[eventType.rawValue] }

    /// Each type's frame, by its number.
    private static let topicFrames: [[UInt8]] = EventType.allCases.map { Array($0.name.utf8) }
}
