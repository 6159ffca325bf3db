import Foundation
import QuoteWire
import ZeroMQ

/// Reads quoted's event log back after a run and checks that no mechanic was ever booked
/// twice (a mechanic may become busy only when free, and free only when busy), and that the
/// wait-list was fair: every quote booked from the line was the oldest waiting one that its
/// mechanic could serve.
struct BookingAudit {
    var events = 0
    var bookings = 0
    /// Bookings served from the wait-list.
    var fromLine = 0
    /// Descriptions of every double booking found.
    var violations: [String] = []
    /// Descriptions of every booking from the line that overtook an older waiting quote.
    var unfair: [String] = []

    /// A quote in line: what its work needs, and the one mechanic it waits for, if any.
    private struct Waiting {
        var quote: Int64
        var needs: Int
        var named: Int64?
    }

    /// Replays the log after `since` through the `events` op, page by page.
    static func run(context: Context, endpoint: String, since: Int64, curve: BenchKeys? = nil) throws -> BookingAudit {
        let socket = try Socket(context, type: .dealer)
        try curve?.configure(socket)
        try socket.set(.linger, 0)
        try socket.set(.receiveTimeout, 30_000)
        try socket.connect(endpoint)
        let codec = WireCodec()
        var audit = BookingAudit()
        var busy: [Int64: Int64] = [:]  // mechanic -> quote
        _ = try socket.send(Array(#"{"v":1,"op":"services"}"#.utf8))
        guard let catalog = try socket.receive() else { throw BenchError("no reply to services") }
        let skill = Dictionary(
            uniqueKeysWithValues: (try codec.decode(WireReply.self, from: catalog).services ?? []).map {
                ($0.name, Self.level($0.minimumSkill))
            })
        var line: [Waiting] = []
        var after = since
        while true {
            _ = try socket.send(Array(#"{"v":1,"op":"events","since":\#(after),"limit":10000}"#.utf8))
            guard let bytes = try socket.receive() else { throw BenchError("no reply to events") }
            let reply = try codec.decode(WireReply.self, from: bytes)
            guard reply.ok, let events = reply.events else { throw BenchError("events refused: \(reply)") }
            guard let last = events.last else { break }
            for event in events {
                audit.events += 1
                if let quote = event.quote, event.type == "quote.reassigned" {
                    // Sent back to the line when no one was free: first in it.
                    if quote.state == "waiting" {
                        let needs = quote.services.map { skill[$0.name] ?? 1 }.max() ?? 1
                        line.insert(Waiting(quote: quote.id, needs: needs, named: nil), at: 0)
                    }
                } else if let quote = event.quote {
                    switch (event.from, event.to) {
                    case (_, "waiting"?):
                        let needs = quote.services.map { skill[$0.name] ?? 1 }.max() ?? 1
                        line.append(Waiting(quote: quote.id, needs: needs, named: quote.waitingFor?.id))
                    case ("waiting"?, "booked"?):
                        audit.fromLine += 1
                        let mechanic = quote.mechanic
                        let level = mechanic.map { Self.level($0.skill) } ?? 0
                        let position = line.firstIndex { $0.quote == quote.id }
                        let first = line.firstIndex {
                            $0.needs <= level && ($0.named == nil || $0.named == mechanic?.id)
                        }
                        if position == nil || position != first {
                            audit.unfair.append(
                                "event #\(event.seq): quote \(quote.id) booked from the line ahead of quote \(first.map { line[$0].quote } ?? 0)"
                            )
                        }
                        if let position { line.remove(at: position) }
                    case ("waiting"?, _):
                        line.removeAll { $0.quote == quote.id }
                    default:
                        break
                    }
                }
                guard let mechanic = event.mechanic?.id else { continue }
                switch event.type {
                case "mechanic.busy":
                    audit.bookings += 1
                    if let holder = busy[mechanic] {
                        audit.violations.append(
                            "event #\(event.seq): mechanic \(mechanic) booked for quote \(event.quoteId ?? 0) while booked for quote \(holder)"
                        )
                    }
                    busy[mechanic] = event.quoteId ?? 0
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

    /// A skill's rank, junior 1 to master 4.
    private static func level(_ name: String) -> Int {
        ["junior": 1, "apprentice": 2, "experienced": 3, "master": 4][name] ?? 0
    }
}
