import Foundation
import Logging
import Testing

@testable import QuoteDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's log lines: one line a record whatever its text, and written by a thread of
/// their own, so that a log nobody reads never holds up a thread that logs.
@Suite("The log sink", .timeLimit(.minutes(2)))
struct LogSinkTests {
    /// A pipe: the sink writes to `write`, the test reads `read`.
    final class Pipe {
        let read: Int32
        let write: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            (read, write) = (ends[0], ends[1])
        }

        deinit {
            close(read)
            close(write)
        }

        /// Fills the pipe with lines of `#`, so that the next write blocks until it is read.
        func fill() {
            let flags = fcntl(write, F_GETFL)
            _ = fcntl(write, F_SETFL, flags | O_NONBLOCK)
            let filler = Array(String(repeating: "#", count: 63).utf8) + [UInt8(ascii: "\n")]
            while filler.withUnsafeBytes({ Glibc.write(write, $0.baseAddress, $0.count) }) > 0 {}
            _ = fcntl(write, F_SETFL, flags)
        }

        /// What arrives within `timeout` of each previous chunk, until `done` says enough.
        func readUntil(timeout: Int32 = 20_000, _ done: (String) -> Bool) -> String {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while !done(String(decoding: received, as: UTF8.self)) {
                var poller = pollfd(fd: read, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, timeout) > 0 else { break }
                let count = chunk.withUnsafeMutableBytes { Glibc.read(read, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += chunk[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    @Test("a record is one line, its control characters escaped, its metadata sorted")
    func recordIsOneLine() {
        let line = JournalLogHandler.line(
            level: .warning, label: "quoted", message: "refused\n<2>quoted: forged\u{7} \\n",
            metadata: ["peer": "a\tb\r", "code": "forbidden"])
        #expect(
            String(decoding: line, as: UTF8.self)
                == "<4>quoted: refused\\n<2>quoted: forged\\x07 \\\\n code=forbidden peer=a\\tb\\r\n")
    }

    @Test("lines logged reach the descriptor whole and in order")
    func linesArriveInOrder() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write)
        defer { #expect(sink.stop(timeout: .seconds(10))) }
        var logger = Logger(label: "test") { JournalLogHandler(label: $0, level: SharedLogLevel(.info), sink: sink) }
        logger.logLevel = .info
        for index in 1...100 { logger.info("line \(index)", metadata: ["n": "\(index)"]) }
        logger.debug("below the level")
        #expect(sink.flush(timeout: .seconds(10)))
        let text = pipe.readUntil { $0.hasSuffix("line 100 n=100\n") }
        #expect(text == (1...100).map { "<6>test: line \($0) n=\($0)\n" }.joined())
    }

    @Test("a log nobody reads holds up no one: what does not fit is dropped, then counted")
    func stalledReaderDropsAndCounts() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write, capacity: 4_096)
        defer { #expect(sink.stop(timeout: .seconds(10))) }
        pipe.fill()
        let total = 2_000
        let padding = String(repeating: "x", count: 90)
        // The pipe is full: were a write to wait for the reader, this loop would never end.
        for index in 1...total { sink.write(Array("line \(index) \(padding)\n".utf8)) }
        #expect(!sink.flush(timeout: .milliseconds(50)))

        // Now read: every line is either delivered or counted as dropped.
        func accounted(_ text: String) -> (delivered: Int, dropped: Int) {
            var delivered = 0
            var dropped = 0
            for line in text.split(separator: "\n") {
                if line.hasPrefix("line ") { delivered += 1 }
                let notice = "<4>quoted: log lines dropped: "
                if line.hasPrefix(notice), let count = Int(line.dropFirst(notice.count).prefix { $0.isNumber }) {
                    dropped += count
                }
            }
            return (delivered, dropped)
        }
        let text = pipe.readUntil {
            let seen = accounted($0)
            return seen.delivered + seen.dropped >= total
        }
        let seen = accounted(text)
        #expect(seen.delivered + seen.dropped == total)
        #expect(seen.dropped > 0)
        #expect(seen.delivered < total)
        #expect(sink.flush(timeout: .seconds(10)))
    }

    @Test("a line longer than the whole queue is dropped, and said so at once")
    func oversizedLineIsCounted() throws {
        let pipe = try Pipe()
        let sink = LogSink(descriptor: pipe.write, capacity: 1_024)
        defer { #expect(sink.stop(timeout: .seconds(10))) }
        sink.write(Array(repeating: UInt8(ascii: "y"), count: 2_000) + [UInt8(ascii: "\n")])
        let text = pipe.readUntil { $0.hasSuffix("\n") }
        #expect(text.hasPrefix("<4>quoted: log lines dropped: 1 "))
        #expect(!text.contains("yyy"))
    }
}
