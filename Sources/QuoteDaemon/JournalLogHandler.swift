public import Logging
import Synchronization

/// A log level that can be changed while running (SIGHUP reload).
public final class SharedLogLevel: Sendable {
    private let level: Mutex<Logger.Level>

    /// Starts at `level`.
    public init(_ level: Logger.Level) { self.level = Mutex(level) }

    /// The level now in force.
    public var value: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}

/// Writes one line per record in a form journald understands: a `<N>` syslog priority
/// prefix (so `journalctl -p` filters work), the label, the message, and `key=value`
/// metadata. Lines go to a ``LogSink``, which no thread that logs waits for.
///
/// A record is always one line: control characters in it (a newline would start a record of
/// its own, whose priority and text a peer could choose if its text reached a log) are
/// written as escapes. A critical record is flushed before `log` returns (for half a second
/// at most): it is what an operator reads after the stop that often follows it.
public struct JournalLogHandler: LogHandler {
    private let label: String
    private let sharedLevel: SharedLogLevel
    private let sink: LogSink
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler for `label` whose level follows `level`, writing to `sink`.
    public init(label: String, level: SharedLogLevel, sink: LogSink) {
        self.label = label
        self.sharedLevel = level
        self.sink = sink
    }

    public var logLevel: Logger.Level {
        get { sharedLevel.value }
        set { sharedLevel.value = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        sink.write(Self.line(level: event.level, label: label, message: "\(event.message)", metadata: merged))
        // What comes before a stop the process may not live through: out before going on,
        // for as long as a reader that keeps up needs.
        if event.level == .critical { sink.flush(timeout: .milliseconds(500)) }
    }

    /// The record's line, its newline included.
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(64 + label.utf8.count + message.utf8.count)
        line.append(contentsOf: "<\(priority(level))>".utf8)
        appendEscaped(label, to: &line)
        line.append(contentsOf: ": ".utf8)
        appendEscaped(message, to: &line)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: " "))
            appendEscaped(key, to: &line)
            line.append(UInt8(ascii: "="))
            appendEscaped("\(value)", to: &line)
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// Appends `text`, its control characters as `\n`, `\r`, `\t` or `\xHH`, and a backslash
    /// as `\\`, so that an escape in the text reads apart from an escaped character.
    static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case 0x0A: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\\"): line.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0..<0x20, 0x7F:
                line.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "x"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)],
                ])
            default: line.append(byte)
            }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
