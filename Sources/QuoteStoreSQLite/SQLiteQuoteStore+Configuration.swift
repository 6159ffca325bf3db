public import Configuration
import Foundation
public import QuoteStore

extension SQLiteQuoteStore {
    /// How the store opens its file.
    ///
    /// Keys, read by ``init(reader:)`` from the `store.sqlite` section (file key / environment
    /// variable):
    /// - `synchronous` / `QUOTED_STORE_SQLITE_SYNCHRONOUS`: `full` (durable on commit) or `normal`; default full.
    /// - `checkpointPages` / `QUOTED_STORE_SQLITE_CHECKPOINT_PAGES`: a background connection checkpoints the
    ///   write-ahead log each time it has grown by this many 4 KiB pages, 0 to 1,000,000; default 128. 0 leaves
    ///   checkpoints to the committing writer (slower tail).
    /// - `busyTimeoutMilliseconds` / `QUOTED_STORE_SQLITE_BUSY_TIMEOUT_MILLISECONDS`: how long a write waits for
    ///   another process's lock, 1 to 600,000; default 5,000.
    /// - `quoteCacheBytes` / `QUOTED_STORE_SQLITE_QUOTE_CACHE_BYTES`: the memory the writer may keep recent quotes
    ///   in, decoded, so that a booking or a completion does not read its quote's row back, 0 (none) to
    ///   1,073,741,824; default 8,388,608 (8 MiB).
    public struct Configuration: Sendable {
        /// `FULL` (default) makes every commit durable before it returns; `NORMAL` in WAL mode
        /// may lose the last commits on power loss, but never corrupts.
        public var synchronousFull: Bool = true
        /// How long a writer waits for another to release the lock.
        public var busyTimeout: Duration = .seconds(5)
        /// What the event log keeps.
        public var retention: EventRetention = .init()
        /// WAL pages after which the committing writer checkpoints by itself (SQLite's
        /// `wal_autocheckpoint`, default 1,000, about 4 MiB). A checkpoint copies pages back
        /// into the database file and fsyncs it, stalling that commit for milliseconds; with a
        /// ``CheckpointService`` keeping the WAL short in the background, raise this so the
        /// writer only checkpoints if the service falls behind.
        public var writerCheckpointPages: Int = 1_000
        /// When set, the store wakes a ``CheckpointService`` through ``checkpointTrigger``
        /// each time the WAL has grown by this many pages; `nil` (default): no background
        /// checkpoints, only the writer's.
        public var backgroundCheckpointPages: Int?
        /// The bytes the writer's recent quotes may take (`QuoteCache`, reckoned from their
        /// stored size); 0 keeps none.
        public var quoteCacheBytes: Int = 8 << 20

        /// The defaults: durable commits, 5 s busy timeout, default retention, checkpoints by
        /// the writer only, 8 MiB of recent quotes.
        public init() {}

        /// Reads the keys above from `reader`, scoped to the store's section; throws a
        /// `StoreError.Code.configuration` error naming the first invalid key.
        public init(reader: ConfigReader) throws(StoreError) {
            let prefix = "store.sqlite."
            let synchronous = (reader.string(forKey: "synchronous") ?? "full").lowercased()
            guard synchronous == "full" || synchronous == "normal" else {
                throw StoreError(.configuration, "\(prefix)synchronous: \"\(synchronous)\" is not full or normal")
            }
            synchronousFull = synchronous == "full"
            let checkpointPages = try Self.integer(
                reader, "checkpointPages", prefix: prefix, default: 128, range: 0...1_000_000)
            if checkpointPages > 0 {
                // The background service keeps the log short; the writer steps in only past ~80 MiB.
                backgroundCheckpointPages = checkpointPages
                writerCheckpointPages = 20_000
            }
            busyTimeout = .milliseconds(
                try Self.integer(reader, "busyTimeoutMilliseconds", prefix: prefix, default: 5_000, range: 1...600_000))
            quoteCacheBytes = try Self.integer(
                reader, "quoteCacheBytes", prefix: prefix, default: 8 << 20, range: 0...(1 << 30))
        }

        private static func integer(
            _ reader: ConfigReader, _ key: String, prefix: String, default fallback: Int, range: ClosedRange<Int>
        ) throws(StoreError) -> Int {
            do {
                let configKey = ConfigKey(key)
                return try WholeNumberSetting.value(
                    number: reader.int(forKey: configKey), text: reader.string(forKey: configKey), in: range)
                    ?? fallback
            } catch {
                throw StoreError(.configuration, "\(prefix)\(key): \(error.reason)")
            }
        }
    }
}
