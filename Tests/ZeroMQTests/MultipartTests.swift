import Testing
import ZeroMQ

@Suite("Multipart messages")
struct MultipartTests {
    @Test("frames past the receiver's maximum are dropped uncopied, and the next message arrives whole")
    func framesPastTheMaximum() throws {
        let context = try Context()
        let receiver = try Socket(context, type: .pair)
        try receiver.set(.linger, 0)
        try receiver.set(.receiveTimeout, 10_000)
        try receiver.bind("inproc://multipart-maximum")
        let sender = try Socket(context, type: .pair)
        try sender.set(.linger, 0)
        try sender.connect("inproc://multipart-maximum")

        _ = try sender.send(multipart: (0..<100).map { [UInt8($0)] })
        _ = try sender.send(multipart: [[7], [8]])
        let cut = try #require(try receiver.receiveMultipart(maximumFrames: 5))
        #expect(cut.frames == (0..<5).map { [UInt8($0)] })
        #expect(cut.droppedFrames == 95)
        let next = try #require(try receiver.receiveMultipart(maximumFrames: 5))
        #expect(next.frames == [[7], [8]])
        #expect(next.droppedFrames == 0)
    }
}
