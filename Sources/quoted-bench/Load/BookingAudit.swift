import Foundation
import QuoteWire
import ZeroMQ

/// Reads quoted's event log back after a run and checks that no mechanic was ever booked
/// twice: a mechanic may become busy only when free, and free only when busy.
struct BookingAudit {
    var events = 0
    var bookings = 0
    /// Descriptions of every violation found.
    var violations: [String] = []

    /// Replays the log after `since` through the `events` op, page by page.
    static func run(context: Context, endpoint: String, since: Int64) throws -> BookingAudit {
        let socket = try Socket(context, type: .dealer)
        try socket.set(.linger, 0)
        try socket.set(.receiveTimeout, 30_000)
        try socket.connect(endpoint)
        let codec = WireCodec()
        var audit = BookingAudit()
        var busy: [Int64: Int64] = [:]  // mechanic -> quote
        var after = since
        while true {
            _ = try socket.send(Array(#"{"v":1,"op":"events","since":\#(after),"limit":10000}"#.utf8))
            guard let bytes = try socket.receive() else { throw BenchError("no reply to events") }
            let reply = try codec.decode(WireReply.self, from: bytes)
            guard reply.ok, let events = reply.events else { throw BenchError("events refused: \(reply)") }
            guard let last = events.last else { break }
            for event in events {
                audit.events += 1
                guard let mechanic = event.mechanic?.id else { continue }
                switch event.type {
                case "mechanic.busy":
                    audit.bookings += 1
                    if let holder = busy[mechanic] {
                        audit.violations.append(
                            "event #\(event.seq): mechanic \(mechanic) booked for quote \(event.quoteId) while booked for quote \(holder)"
                        )
                    }
                    busy[mechanic] = event.quoteId
                case "mechanic.free":
                    if busy.removeValue(forKey: mechanic) == nil {
                        audit.violations.append("event #\(event.seq): mechanic \(mechanic) freed while not booked")
                    }
                default:
                    break
                }
            }
            after = last.seq
        }
        return audit
    }
}
