import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Every frame the end-to-end tests exchange with quoted through ``Client`` and
/// ``Subscriber``, written as JSON lines to `$QUOTED_CONTRACT_LOG/<pid>.jsonl` when that
/// directory is set (`scripts/test` sets it): `scripts/check-contract` then validates each
/// request, reply and event against `docs/schema/`, so that the schemas and the daemon cannot
/// drift apart. Each request is written with the code it was answered with, so that the
/// frames a test sends malformed on purpose can be told from the others.
enum ContractLog {
    private static let file = Mutex<FileHandle?>(open())

    private static func open() -> FileHandle? {
        guard let directory = ProcessInfo.processInfo.environment["QUOTED_CONTRACT_LOG"], !directory.isEmpty else {
            return nil
        }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = "\(directory)/\(getpid()).jsonl"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = FileHandle(forWritingAtPath: path)
        _ = try? handle?.seekToEnd()
        return handle
    }

    /// Records a request and the reply that answered it.
    static func exchange(request: [UInt8], reply: [UInt8], answeredWith code: String?) {
        write(["kind": "request", "frame": text(request), "answer": code ?? "ok"])
        write(["kind": "reply", "frame": text(reply)])
    }

    /// Records an event's body frame.
    static func event(_ body: [UInt8]) {
        write(["kind": "event", "frame": text(body)])
    }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private static func write(_ line: [String: String]) {
        guard var data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else { return }
        data.append(UInt8(ascii: "\n"))
        file.withLock { $0?.write(data) }
    }
}

/// The requests a ``Client`` sent and has not had answered yet, oldest first: a DEALER's
/// replies come back in the order of its requests.
final class PendingRequests: Sendable {
    private let frames = Mutex<[[UInt8]]>([])

    func sent(_ frame: [UInt8]) { frames.withLock { $0.append(frame) } }

    func answered() -> [UInt8]? {
        frames.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}
