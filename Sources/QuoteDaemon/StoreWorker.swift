import Foundation
import Synchronization
import ZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// The store thread: commits one ``StoreStage`` batch after another, taking each next batch
/// itself the moment the last one is done, so that it never waits for the I/O thread.
///
/// The batch being received lives here, behind a ``Mutex``: the I/O thread decodes each
/// request into it as it arrives (``append(_:engine:)``) while the store thread commits the
/// batch before; when that commit is done, the store thread swaps the received batch out and
/// starts on it at once. Finished batches queue up, in order, for the I/O thread to encode,
/// reply to and publish; a byte written to a pipe whose read end, ``readyDescriptor``, the
/// I/O thread polls beside its sockets says there is something to take. No socket ever leaves
/// the I/O thread.
///
/// Before this, the I/O thread handed each batch over itself, and only between two polls:
/// while it was encoding the last batch's replies the store sat idle, 20% of a closed-loop
/// run (docs/benchmarks.md).
final class StoreWorker: Sendable {
    private struct State {
        /// Requests received and decoded, for the store's next transaction.
        var next: Engine.Batch
        /// Committed batches, oldest first, waiting to be answered.
        var done: [Engine.Executed] = []
        /// The store thread is waiting for requests (and must be woken for them).
        var idle = false
        /// The store thread is committing a batch.
        var executing = false
        var stopping = false
    }

    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let maxBatch: Int
    /// Readable while a finished batch waits to be taken, or when a full batch was taken and
    /// there is room to receive again.
    let readyDescriptor: Int32
    private let signalDescriptor: Int32

    /// Starts the store thread; batches hold at most `maxBatch` requests, each begun empty by
    /// `newBatch` (priced in the catalog's currency of that moment).
    init(stage: StoreStage, maxBatch: Int, newBatch: @escaping @Sendable () -> Engine.Batch) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readyDescriptor = ends[0]
        signalDescriptor = ends[1]
        self.maxBatch = max(1, maxBatch)
        state = Mutex(State(next: newBatch()))
        let thread = Thread { [self] in
            work(stage, newBatch: newBatch)
        }
        thread.name = "quoted-store"
        thread.start()
    }

    private func work(_ stage: StoreStage, newBatch: () -> Engine.Batch) {
        defer { finished.signal() }
        while true {
            let fresh = newBatch()
            let (job, stop) = state.withLock { state -> (Engine.Batch?, Bool) in
                guard state.next.isEmpty else {
                    var job = fresh
                    swap(&job, &state.next)
                    state.executing = true
                    return (job, false)
                }
                if state.stopping { return (nil, true) }
                state.idle = true
                return (nil, false)
            }
            if let job {
                // A full batch kept the I/O thread from receiving: tell it there is room.
                if job.count >= maxBatch { signal() }
                let executed = stage.execute(job)
                state.withLock { state in
                    state.done.append(executed)
                    state.executing = false
                }
                signal()
            } else if stop {
                return
            } else {
                wake.wait()
            }
        }
    }

    private func signal() {
        var byte: UInt8 = 1
        _ = write(signalDescriptor, &byte, 1)
    }

    /// Decodes `message` into the batch being received (on the I/O thread), waking the store
    /// if it waits for work. Returns whether that batch has room for more.
    func append(_ message: Multipart, engine: Engine) -> Bool {
        let (room, wasIdle) = state.withLock { state in
            engine.parse(message, into: &state.next)
            let wasIdle = state.idle
            state.idle = false
            return (state.next.count < maxBatch, wasIdle)
        }
        if wasIdle { wake.signal() }
        return room
    }

    /// Whether the batch being received has room for more requests.
    var hasRoom: Bool { state.withLock { $0.next.count < maxBatch } }

    /// Whether every received request has been committed and taken.
    var isDrained: Bool { state.withLock { $0.next.isEmpty && !$0.executing && $0.done.isEmpty } }

    /// The committed batches not yet taken, oldest first.
    func takeResults() -> [Engine.Executed] {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(readyDescriptor, &bytes, bytes.count) > 0 {}
        return state.withLock { state in
            let done = state.done
            state.done = []
            return done
        }
    }

    /// Stops the thread once every received request is committed, and waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        finished.wait()
        close(readyDescriptor)
        close(signalDescriptor)
    }
}
