import Bytes
import Testing

@testable import QuoteWire

@Suite("A codec's kept writer buffer")
struct WriterBufferTests {
    @Test("a buffer given back is lent again empty, with its room, and one grown too large is not kept")
    func keptBetweenWriters() {
        let buffer = WriterBuffer()
        var first = buffer.take(capacity: 100)
        first.append(UInt8(ascii: "x"))
        let room = first.reservedCapacity
        buffer.giveBack(first)

        let again = buffer.take(capacity: 10)
        #expect(again.count == 0)
        #expect(again.reservedCapacity == room)
        // Lent out: another writer meanwhile gets a buffer of its own.
        let other = buffer.take(capacity: 10)
        #expect(other.reservedCapacity == 64)
        buffer.giveBack(again)

        var large = buffer.take(capacity: WriterBuffer.keptCapacity + 1)
        #expect(large.reservedCapacity > WriterBuffer.keptCapacity)
        large.append(UInt8(ascii: "y"))
        buffer.giveBack(large)
        #expect(buffer.take(capacity: 10).reservedCapacity == 64)
    }

    @Test("frames written one after another through one codec hold only their own bytes")
    func framesDoNotShareBytes() throws {
        let codec = WireCodec()
        let long = codec.encode(
            WireReply.failure(
                .string("first"), WireError(code: .invalidRequest, message: String(repeating: "m", count: 500))))
        let short = codec.encode(WireReply.success(.number(2)))
        #expect(String(decoding: short, as: UTF8.self) == #"{"v":1,"id":2,"ok":true}"#)
        #expect(long.count > 500)
    }
}
