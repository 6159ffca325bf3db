import Foundation
public import QuoteWire
import Synchronization
import Threads
import ZeroMQ

extension Quoted {
    /// Every event after `since` (`nil`: from now on), in `seq` order, each exactly once: what
    /// the live stream drops (a slow consumer, a restart of quoted, a subscription not yet in
    /// place) is replayed from quoted's log with `events` before the stream goes on. Ends when
    /// the consumer stops iterating; throws a ``QuotedError`` when quoted cannot be reached at
    /// the start. Events are buffered while the consumer is busy.
    ///
    /// A thread of its own owns the subscription and its replay client, for as long as the
    /// stream is iterated.
    public func events(since: Int64?) -> AsyncThrowingStream<WireEvent, any Error> {
        let configuration = configuration
        return AsyncThrowingStream { continuation in
            let box = StopFlag()
            continuation.onTermination = { _ in box.stop() }
            let thread = Thread(named: "quoted-events") {
                do throws(QuotedError) {
                    let context: Context
                    do { context = try Context() } catch {
                        throw QuotedError(.internal, "cannot start ZeroMQ: \(error)")
                    }
                    let client = try CommandClient(
                        context: context, endpoint: configuration.endpoints.joined(separator: ","),
                        timeout: configuration.timeout, curve: configuration.curve)
                    var follower = try EventFollower(
                        context: context, client: client, events: configuration.events.joined(separator: ","),
                        since: since, curve: configuration.curve)
                    try follower.run(
                        deliver: { event in
                            if case .terminated = continuation.yield(event) { return false }
                            return !box.isStopped
                        }, notice: { _ in }, isStopped: { box.isStopped })
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            thread.start()
        }
    }
}

/// The consumer stopped iterating: shared between the stream's termination handler and the
/// thread that follows.
private final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isStopped: Bool { flag.load(ordering: .relaxed) }
    func stop() { flag.store(true, ordering: .relaxed) }
}
