import Foundation
import Synchronization
import ZeroMQ

/// The baseline: a ROUTER on its own thread that sends every request straight back, so the
/// same clients, messages and machine show what ZeroMQ alone allows in the same run.
final class EchoServer: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let endpointBox = EndpointBox()
    private let finished = DispatchSemaphore(value: 0)

    init(context: Context) {
        Thread { [self] in
            defer { finished.signal() }
            do {
                let router = try Socket(context, type: .router)
                try router.set(.linger, 0)
                try router.set(.sendHighWaterMark, 0)
                try router.set(.receiveHighWaterMark, 0)
                try router.bind("tcp://127.0.0.1:*")
                endpointBox.publish(router.lastEndpoint)
                var poller = Poller()
                poller.register(router)
                var identity = Message()
                var body = Message()
                while !stopping.load(ordering: .relaxed) {
                    guard try poller.poll(timeout: .milliseconds(50)) > 0 else { continue }
                    while try router.receive(&identity, dontWait: true) {
                        _ = try router.receive(&body)
                        _ = try router.send(&identity, more: true)
                        _ = try router.send(&body)
                    }
                }
            } catch {
                FileHandle.standardError.write(Data("echo server: \(error)\n".utf8))
                endpointBox.publish("")
            }
        }.start()
    }

    /// Where the echo listens.
    var endpoint: String { endpointBox.wait() }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }
}
