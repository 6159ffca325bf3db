import ArgumentParser
import CZeroMQ
import Foundation
import Synchronization
import ZeroMQ

/// Pipelined ROUTER/DEALER echo over TCP loopback: the Swift wrapper against raw libzmq,
/// in the same run, with the same message size and window.
struct ZeroMQEcho: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "zmq",
        abstract: "Pipelined ROUTER/DEALER echo: the ZeroMQ wrapper against raw libzmq.")

    @Option(help: "Round trips per run.") var messages = 1_000_000
    @Option(help: "Bytes per message.") var size = 300
    @Option(help: "Messages in flight.") var window = 1_000
    @Option(help: "Runs of each variant; the best is reported.") var runs = 3

    func run() throws {
        print("# ZeroMQ echo: \(messages) round trips of \(size) bytes, window \(window), best of \(runs)")
        var raw = 0.0
        var wrapped = 0.0
        for _ in 0..<runs {
            raw = max(raw, RawEcho(messages: messages, size: size, window: window).run())
            wrapped = max(wrapped, try WrappedEcho(messages: messages, size: size, window: window).run())
        }
        print(String(format: "raw libzmq      %10.0f round trips/s", raw))
        print(String(format: "ZeroMQ wrapper  %10.0f round trips/s  (%.1f%% of raw)", wrapped, wrapped / raw * 100))
    }
}

/// Hands a bound endpoint from the server thread to the client.
final class EndpointBox: Sendable {
    private let value = Mutex<String?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func publish(_ endpoint: String) {
        value.withLock { $0 = endpoint }
        ready.signal()
    }

    func wait() -> String {
        ready.wait()
        return value.withLock { $0! }
    }
}

/// The echo built on the `ZeroMQ` module.
struct WrappedEcho {
    let messages: Int
    let size: Int
    let window: Int

    func run() throws -> Double {
        let context = try Context()
        let box = EndpointBox()
        let count = messages
        let server = Thread {
            do {
                let router = try Socket(context, type: .router)
                // The last replies must still go out after the loop ends: linger until delivered.
                try router.set(.linger, -1)
                try router.set(.sendHighWaterMark, 0)
                try router.set(.receiveHighWaterMark, 0)
                try router.bind("tcp://127.0.0.1:*")
                box.publish(router.lastEndpoint)
                var identity = Message()
                var body = Message()
                for _ in 0..<count {
                    _ = try router.receive(&identity)
                    _ = try router.receive(&body)
                    try router.send(&identity, more: true)
                    try router.send(&body)
                }
            } catch {
                FileHandle.standardError.write(Data("server: \(error)\n".utf8))
            }
        }
        server.start()
        let dealer = try Socket(context, type: .dealer)
        try dealer.set(.linger, 0)
        try dealer.set(.sendHighWaterMark, 0)
        try dealer.set(.receiveHighWaterMark, 0)
        try dealer.connect(box.wait())
        let payload = [UInt8](repeating: 42, count: size)
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var received = 0
        var reply = Message()
        while received < messages {
            while sent < messages && sent - received < window {
                try dealer.send(payload)
                sent += 1
            }
            _ = try dealer.receive(&reply)
            received += 1
        }
        return Double(messages) / (clock.now - start).seconds
    }
}

/// The same echo written directly against libzmq's C API, moving `zmq_msg_t`s.
struct RawEcho {
    let messages: Int
    let size: Int
    let window: Int

    func run() -> Double {
        let context = zmq_ctx_new()!
        defer { zmq_ctx_term(context) }
        let box = EndpointBox()
        let count = messages
        nonisolated(unsafe) let sharedContext = context
        let server = Thread {
            let router = zmq_socket(sharedContext, ZMQ_ROUTER)!
            // The last replies must still go out after the loop ends: linger until delivered.
            var zero: Int32 = 0
            var forever: Int32 = -1
            zmq_setsockopt(router, ZMQ_LINGER, &forever, 4)
            zmq_setsockopt(router, ZMQ_SNDHWM, &zero, 4)
            zmq_setsockopt(router, ZMQ_RCVHWM, &zero, 4)
            zmq_bind(router, "tcp://127.0.0.1:*")
            var buffer = [CChar](repeating: 0, count: 256)
            var length = buffer.count
            zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, &buffer, &length)
            box.publish(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            var identity = zmq_msg_t()
            var body = zmq_msg_t()
            zmq_msg_init(&identity)
            zmq_msg_init(&body)
            for _ in 0..<count {
                zmq_msg_recv(&identity, router, 0)
                zmq_msg_recv(&body, router, 0)
                zmq_msg_send(&identity, router, ZMQ_SNDMORE)
                zmq_msg_send(&body, router, 0)
            }
            zmq_msg_close(&identity)
            zmq_msg_close(&body)
            zmq_close(router)
        }
        server.start()
        let dealer = zmq_socket(context, ZMQ_DEALER)!
        var zero: Int32 = 0
        zmq_setsockopt(dealer, ZMQ_LINGER, &zero, 4)
        zmq_setsockopt(dealer, ZMQ_SNDHWM, &zero, 4)
        zmq_setsockopt(dealer, ZMQ_RCVHWM, &zero, 4)
        zmq_connect(dealer, box.wait())
        let payload = [UInt8](repeating: 42, count: size)
        var reply = zmq_msg_t()
        zmq_msg_init(&reply)
        let clock = ContinuousClock()
        let start = clock.now
        var sent = 0
        var received = 0
        while received < messages {
            while sent < messages && sent - received < window {
                payload.withUnsafeBytes { _ = zmq_send(dealer, $0.baseAddress, $0.count, 0) }
                sent += 1
            }
            zmq_msg_recv(&reply, dealer, 0)
            received += 1
        }
        let elapsed = (clock.now - start).seconds
        zmq_msg_close(&reply)
        zmq_close(dealer)
        return Double(messages) / elapsed
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number for rates.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
