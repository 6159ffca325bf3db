import Foundation
import Testing
import ZeroMQ

extension Subscriber {
    /// Makes changes with `change` until this subscriber hears one, so its subscription is
    /// live, then `more` changes; returns every event it heard, through the last `seq` that
    /// `client`'s daemon reports.
    func hear(through client: borrowing Client, more: Int, change: () throws -> Void) throws -> [[String: Any]] {
        var heard: [[String: Any]] = []
        var made = 0
        while heard.isEmpty {
            try change()
            made += 1
            if let event = try next(timeout: .milliseconds(200)) { heard.append(event.body) }
            try #require(made < 100, "the subscription never became live")
        }
        for _ in 0..<more { try change() }
        let lastSeq = try #require(try client.call(Requests.op("ping"))["lastSeq"] as? Int)
        while (heard.last?["seq"] as? Int ?? 0) < lastSeq {
            heard.append(
                try #require(try next(), "heard through \(heard.last?["seq"] ?? "nothing") of \(lastSeq)").body)
        }
        return heard
    }
}

/// Whether `heard` runs gap-free from its first `seq`, each event as the log holds it
/// (`client`'s `events` replay).
func heardAsLogged(_ heard: [[String: Any]], _ client: borrowing Client) throws -> Bool {
    let seqs = heard.compactMap { $0["seq"] as? Int }
    guard let first = seqs.first, seqs == Array(first..<(first + seqs.count)) else { return false }
    let logged = try allEvents(client, since: first - 1).prefix(heard.count)
    return zip(heard, logged).allSatisfy { NSDictionary(dictionary: $0) == NSDictionary(dictionary: $1) }
        && logged.count == heard.count
}
