import QuoteClient
import Testing

@Suite("The event sequencer turns a lossy live stream into a gap-free one")
struct EventSequencerTests {
    @Test("An event at the expected seq is printed and moves the sequencer on")
    func inOrder() {
        var sequencer = EventSequencer(since: 4)
        #expect(sequencer.classify(5) == .print)
        sequencer.printed(5)
        #expect(sequencer.next == 6)
    }

    @Test("An event past the expected seq reports exactly the missing range")
    func gap() {
        let sequencer = EventSequencer(since: 4)
        #expect(sequencer.classify(9) == .gap(from: 5, to: 8))
    }

    @Test("An event already printed (from a replay) is a duplicate", arguments: [1, 5, 9] as [Int64])
    func duplicate(seq: Int64) {
        var sequencer = EventSequencer(since: 0)
        sequencer.printed(9)
        #expect(sequencer.classify(seq) == .duplicate)
    }

    @Test("Without a starting point, the first event is printed whatever its seq")
    func unknownStart() {
        let sequencer = EventSequencer(since: nil)
        #expect(sequencer.classify(1234) == .print)
        #expect(!sequencer.isBehind(lastSeq: 99))
    }

    @Test("A daemon whose last seq is past what was printed shows a trailing gap")
    func trailingGap() {
        var sequencer = EventSequencer(since: 0)
        sequencer.printed(7)
        #expect(!sequencer.isBehind(lastSeq: 7))
        #expect(sequencer.isBehind(lastSeq: 8))
    }

    @Test("The largest seq, from --since or from a daemon, is taken without overflow")
    func largestSeq() {
        let after = EventSequencer(since: .max)
        #expect(after.classify(.max) == .duplicate)
        #expect(!after.isBehind(lastSeq: .max))
        var sequencer = EventSequencer(since: .max - 2)
        #expect(sequencer.classify(.max - 1) == .print)
        sequencer.printed(.max - 1)
        #expect(sequencer.classify(.max) == .print)
        sequencer.printed(.max)
        // Printed once: never again, and nothing is missing after it.
        #expect(sequencer.classify(.max) == .duplicate)
        #expect(!sequencer.isBehind(lastSeq: .max))
    }
}
