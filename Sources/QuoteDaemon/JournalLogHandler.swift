public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

/// Writes one line per record to standard error in a form journald understands: a
/// `<N>` syslog priority prefix (so `journalctl -p` filters work), the label, the message,
/// and `key=value` metadata.
public struct JournalLogHandler: LogHandler {
    private let label: String
    private let sharedLevel: SharedLogLevel
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler for `label` whose level follows `level`.
    public init(label: String, level: SharedLogLevel) {
        self.label = label
        self.sharedLevel = level
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
        var line = "<\(Self.priority(event.level))>\(label): \(event.message)"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += "\n"
        var bytes = line
        bytes.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    }

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
