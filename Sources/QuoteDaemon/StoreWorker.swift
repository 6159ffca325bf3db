import Foundation
import QuoteRules
import Synchronization
import ZeroMQ

/// The store stage's loop: commits one ``StoreStage`` batch after another, taking each next
/// batch itself the moment the last one is done, so that it never waits for the I/O thread.
///
/// The batch being received lives here, behind a ``Mutex``: the I/O thread decodes each
/// request into it as it arrives (``append(_:engine:)``) while the loop commits the batch
/// before; when that commit is done, the loop swaps the received batch out and starts on it at
/// once. Finished batches queue up, in order, for the I/O thread to encode, reply to and
/// publish; a byte written to a ``WakePipe`` whose read end, ``readyDescriptor``, the I/O thread polls
/// beside its sockets says there is something to take. No socket ever leaves the I/O thread.
final class StoreWorker: Sendable {
    private struct State {
        /// Requests received and decoded, for the store's next transaction.
        var next: Engine.Batch
        /// Committed batches, oldest first, waiting to be answered.
        var done: [Engine.Executed] = []
        /// The loop, waiting for requests (or for the stop).
        var waiter: CheckedContinuation<Void, Never>?
        /// The loop is committing a batch.
        var executing = false
        var stopping = false
    }

    private let state: Mutex<State>
    private let stage: StoreStage
    private let catalog: LiveCatalog
    private let maxBatch: Int
    /// Page reads per batch: their replies' encoding, on the I/O thread, stays within
    /// ``CommandServer/bytesPerTurn``.
    private let maxPageReads: Int
    /// Readable while a finished batch waits to be taken, or when a full batch was taken and
    /// there is room to receive again.
    var readyDescriptor: Int32 { ready.readDescriptor }
    private let ready: WakePipe

    /// A worker whose batches hold at most `maxBatch` requests, each begun empty against
    /// `catalog`'s catalog of that moment; ``run()`` is its loop.
    init(stage: StoreStage, catalog: LiveCatalog, maxBatch: Int, maxPageReads: Int = .max) throws {
        ready = try WakePipe()
        self.maxBatch = max(1, maxBatch)
        self.maxPageReads = max(1, maxPageReads)
        self.stage = stage
        self.catalog = catalog
        state = Mutex(State(next: Engine.newBatch(catalog)))
    }

    /// Commits batches until ``stop()`` has been called and every received request is
    /// committed.
    func run() async {
        while true {
            let fresh = Engine.newBatch(catalog)
            let (job, stop) = state.withLock { state -> (Engine.Batch?, Bool) in
                guard state.next.isEmpty else {
                    var job = fresh
                    swap(&job, &state.next)
                    state.executing = true
                    return (job, false)
                }
                return (nil, state.stopping)
            }
            if let job {
                // A full batch kept the I/O thread from receiving: tell it there is room.
                if !Self.hasRoom(job, maxBatch, maxPageReads) { signal() }
                let executed = await stage.execute(job)
                state.withLock { state in
                    state.done.append(executed)
                    state.executing = false
                }
                signal()
            } else if stop {
                return
            } else {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state in
                        guard state.next.isEmpty && !state.stopping else { return true }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
    }

    private func signal() {
        ready.signal()
    }

    /// Decodes `message` into the batch being received (on the I/O thread), waking the loop
    /// if it waits for work. Returns whether that batch has room for more.
    func append(_ message: Multipart, engine: Engine) -> Bool {
        let (room, waiter) = state.withLock { state in
            engine.parse(message, into: &state.next)
            let waiter = state.waiter
            state.waiter = nil
            return (Self.hasRoom(state.next, maxBatch, maxPageReads), waiter)
        }
        waiter?.resume()
        return room
    }

    /// Adds `command` to the batch being received, from any thread, answered to no one: its
    /// events are published like any others (the daemon's own work, such as serving the
    /// wait-list after a reload).
    func enqueue(_ command: CheckedCommand) {
        let waiter = state.withLock { state in
            let index = state.next.replies.count
            state.next.replies.append(nil)
            state.next.marks.append(nil)
            state.next.writes.append(
                (index, Engine.Pending(envelope: [], id: nil, work: .write(command), actor: .daemon)))
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Whether the batch being received has room for more requests.
    var hasRoom: Bool { state.withLock { Self.hasRoom($0.next, maxBatch, maxPageReads) } }

    private static func hasRoom(_ batch: Engine.Batch, _ maxBatch: Int, _ maxPageReads: Int) -> Bool {
        batch.count < maxBatch && batch.pageReads < maxPageReads
    }

    /// Whether every received request has been committed and taken.
    var isDrained: Bool { state.withLock { $0.next.isEmpty && !$0.executing && $0.done.isEmpty } }

    /// The committed batches not yet taken, oldest first.
    func takeResults() -> [Engine.Executed] {
        ready.drain()
        return state.withLock { state in
            let done = state.done
            state.done = []
            return done
        }
    }

    /// Lets ``run()`` return once every received request is committed.
    func stop() {
        let waiter = state.withLock { state in
            state.stopping = true
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
