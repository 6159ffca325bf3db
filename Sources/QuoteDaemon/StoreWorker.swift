import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The store thread: runs one ``StoreStage`` batch at a time, so that the I/O thread can
/// decode the next batch and encode the last one while this one commits.
///
/// Hand-over is through a ``Mutex``: the I/O thread puts a batch in and signals; the store
/// thread takes it, executes it, puts the result back and writes a byte to a pipe whose read
/// end, ``readyDescriptor``, the I/O thread polls beside its sockets. No socket ever leaves
/// the I/O thread.
final class StoreWorker: Sendable {
    private struct State {
        var job: Engine.Batch?
        var done: Engine.Executed?
        var stopping = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Readable while a finished batch waits to be taken.
    let readyDescriptor: Int32
    private let signalDescriptor: Int32

    /// Starts the store thread.
    init(stage: StoreStage) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readyDescriptor = ends[0]
        signalDescriptor = ends[1]
        let thread = Thread { [self] in
            work(stage)
        }
        thread.name = "quoted-store"
        thread.start()
    }

    private func work(_ stage: StoreStage) {
        defer { finished.signal() }
        while true {
            wake.wait()
            let (job, stopping) = state.withLock { state in
                let job = state.job
                state.job = nil
                return (job, state.stopping)
            }
            if let job {
                let executed = stage.execute(job)
                state.withLock { $0.done = executed }
                var byte: UInt8 = 1
                _ = write(signalDescriptor, &byte, 1)
            } else if stopping {
                return
            }
        }
    }

    /// Hands over a batch; the caller never has two in flight.
    func submit(_ batch: Engine.Batch) {
        state.withLock { $0.job = batch }
        wake.signal()
    }

    /// The finished batch, if there is one.
    func takeResult() -> Engine.Executed? {
        var bytes = [UInt8](repeating: 0, count: 16)
        while read(readyDescriptor, &bytes, bytes.count) > 0 {}
        return state.withLock { state in
            let done = state.done
            state.done = nil
            return done
        }
    }

    /// Stops the thread once the batch in hand (if any) is done, and waits for it.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        finished.wait()
        close(readyDescriptor)
        close(signalDescriptor)
    }
}
