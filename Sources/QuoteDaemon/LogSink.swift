import Dispatch
import Foundation
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon's log lines go: a thread of its own writes them to a file descriptor
/// (standard error, which journald reads), so that no thread that logs ever waits for it.
///
/// A reader that stops (journald stalled, a terminal paused, a pipe nobody drains) would
/// otherwise block the first thread to log, the I/O thread included, and with it every
/// reply and the watchdog. Here lines wait in a queue bounded in bytes (with the lines being
/// written); past that bound they are dropped and counted, and once the descriptor takes
/// lines again a line says how many were lost. Only the sink's thread blocks, and it blocks
/// `SIGPIPE`, so that a reader gone for good is an error it ignores rather than the end of
/// the process. It writes to a duplicate of the descriptor it is given, which it alone
/// closes.
public final class LogSink: Sendable {
    /// The bytes queued by default: some thousands of lines, far more than a burst of the
    /// daemon's rate-limited warnings.
    public static let defaultCapacity = 1 << 20

    private struct State {
        /// Lines written and not yet taken by the thread, one after the other.
        var pending: [UInt8] = []
        /// The bytes the thread took and is writing.
        var inFlight = 0
        /// Lines dropped since the thread last said so.
        var dropped = 0
        /// Bytes ever queued, and of those, ever written or given up on (a failed write).
        var queued = 0
        var done = 0
        var stopping = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let descriptor: Int32
    /// The most bytes queued at once: a line that would go past it is dropped.
    public let capacity: Int

    /// A sink writing to a duplicate of `descriptor` with at most `capacity` bytes queued and
    /// being written, its thread started.
    public init(descriptor: Int32 = 2, capacity: Int = LogSink.defaultCapacity) {
        let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 3)
        self.descriptor = duplicate >= 0 ? duplicate : descriptor
        let owned = duplicate >= 0
        self.capacity = max(1, capacity)
        state.withLock { $0.pending.reserveCapacity(self.capacity) }
        Thread(named: "quoted-log") { [self] in
            run()
            if owned { close(self.descriptor) }
            finished.signal()
        }.start()
    }

    /// Queues `line` (its newline included) for the descriptor, at once; drops it when the
    /// queue is full (or the line longer than it), or once the sink is stopped.
    public func write(_ line: some Collection<UInt8>) {
        let wake = state.withLock { state in
            let wasIdle = state.pending.isEmpty && state.dropped == 0
            guard !state.stopping, state.pending.count + state.inFlight <= capacity - line.count else {
                state.dropped += 1
                return wasIdle
            }
            state.pending.append(contentsOf: line)
            state.queued += line.count
            return wasIdle
        }
        // One wake-up for the lines (and drops) that gather while the thread is busy.
        if wake { available.signal() }
    }

    /// Waits until every line queued so far is written (or its write failed), for at most
    /// `timeout`: before the process exits. Whether everything was.
    @discardableResult
    public func flush(timeout: Duration) -> Bool {
        let target = state.withLock { $0.queued }
        let deadline = ContinuousClock.now + timeout
        while state.withLock({ $0.done < target }) {
            guard ContinuousClock.now < deadline else { return false }
            // Only at exit, and only while the descriptor is slow: a short poll is enough.
            usleep(1_000)
        }
        return true
    }

    /// Stops the thread once what is queued is written, waiting at most `timeout` for that;
    /// lines written afterwards are dropped. Whether the thread ended (and closed its
    /// descriptor) in time. For a sink that is not the process's last; called once.
    @discardableResult
    public func stop(timeout: Duration) -> Bool {
        state.withLock { $0.stopping = true }
        available.signal()
        return finished.wait(timeout: .now() + .nanoseconds(Int(clamping: timeout.nanoseconds))) == .success
    }

    private func run() {
        #if canImport(Glibc)
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
        #endif
        // The lines taken from the queue, swapped with its empty buffer: two buffers in turn,
        // each kept at the capacity, no allocation per batch of lines.
        var taken: [UInt8] = []
        taken.reserveCapacity(capacity)
        while true {
            available.wait()
            let (dropped, stopping) = state.withLock { state in
                swap(&state.pending, &taken)
                state.inFlight = taken.count
                defer { state.dropped = 0 }
                return (state.dropped, state.stopping)
            }
            if !taken.isEmpty {
                writeAll(taken)
                state.withLock {
                    $0.done += taken.count
                    $0.inFlight = 0
                }
            }
            // After the lines taken with it: every line it counts came after them.
            if dropped > 0 {
                writeAll(
                    Array(
                        "<4>quoted: log lines dropped: \(dropped) (the log was not read fast enough, or a line was longer than \(capacity) bytes)\n"
                            .utf8))
            }
            taken.removeAll(keepingCapacity: true)
            if stopping && state.withLock({ $0.pending.isEmpty }) { return }
        }
    }

    /// Writes `bytes` whole, across partial writes and interruptions; gives up on an error
    /// (a reader gone, a descriptor closed): there is nowhere else to say so.
    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    // A non-blocking descriptor: wait until it takes more.
                    var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, 1_000)
                } else {
                    return
                }
            }
        }
    }
}

extension Duration {
    /// The whole duration in nanoseconds, saturating.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, carried) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return carried ? (seconds < 0 ? .min : .max) : total
    }
}
