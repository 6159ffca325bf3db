import Foundation
import Testing
import ZeroMQ

/// A plain ZeroMQ client speaking the wire protocol with JSON objects, as any language would.
struct Client: ~Copyable {
    let socket: Socket
    let isReq: Bool
    /// Requests not yet answered, for the contract log.
    private let pending = PendingRequests()

    init(_ context: Context, endpoint: String, type: SocketType = .dealer, curve: CurveKeys? = nil) throws {
        let socket = try Socket(context, type: type)
        try socket.set(.linger, 0)
        try curve?.configure(socket)
        try socket.set(.receiveTimeout, 20_000)
        try socket.set(.sendTimeout, 20_000)
        try socket.connect(endpoint)
        self.socket = socket
        isReq = type == .req
    }

    /// Sends one request object without waiting for the reply.
    func send(_ request: [String: Any]) throws {
        let body = Array(try JSONSerialization.data(withJSONObject: request))
        try sendRaw(body)
    }

    /// Sends one raw body frame in the protocol's envelope.
    func sendRaw(_ body: [UInt8]) throws {
        pending.sent(body)
        if isReq {
            try socket.send(body)
        } else {
            try socket.send(multipart: [[], body])
        }
    }

    /// Receives one reply object.
    func receive() throws -> [String: Any] {
        let message = try #require(try socket.receiveMultipart())
        let body = try #require(message.frames.last)
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        if let request = pending.answered() {
            ContractLog.exchange(request: request, reply: body, answeredWith: reply.errorCode)
        }
        return reply
    }

    /// One request, one reply.
    func call(_ request: [String: Any]) throws -> [String: Any] {
        try send(request)
        return try receive()
    }
}

/// Every event after `since` in the daemon's log, page by page: a page may stop early at
/// the reply budget (`truncated`), so it asks again from the last `seq` until `lastSeq`.
func allEvents(_ client: borrowing Client, since: Int = 0) throws -> [[String: Any]] {
    var all: [[String: Any]] = []
    var after = since
    while true {
        let reply = try client.call(Requests.op("events", ["since": after, "limit": 10_000]))
        let page = try #require(reply["events"] as? [[String: Any]], "\(reply)")
        all += page
        after = page.last?["seq"] as? Int ?? after
        if page.isEmpty || after >= reply["lastSeq"] as? Int ?? 0 { return all }
    }
}

/// A SUB on the daemon's events, every topic.
struct Subscriber: ~Copyable {
    let socket: Socket

    init(_ context: Context, endpoint: String, topics: [String] = [""], curve: CurveKeys? = nil) throws {
        let socket = try Socket(context, type: .sub)
        try socket.set(.linger, 0)
        try curve?.configure(socket)
        try socket.set(.receiveTimeout, 20_000)
        for topic in topics { try socket.set(.subscribe, Array(topic.utf8)) }
        try socket.connect(endpoint)
        self.socket = socket
    }

    /// The next event: its topic and body; `nil` if none came within the timeout.
    func next(timeout: Duration = .seconds(20)) throws -> (topic: String, body: [String: Any])? {
        var poller = Poller()
        poller.register(socket)
        guard try poller.poll(timeout: timeout) > 0, let message = try socket.receiveMultipart(dontWait: true) else {
            return nil
        }
        ContractLog.event(message.frames[1])
        let body = try JSONSerialization.jsonObject(with: Data(message.frames[1])) as? [String: Any] ?? [:]
        return (String(decoding: message.frames[0], as: UTF8.self), body)
    }
}

/// A CURVE client's keys and the server's public key, set on a socket as any language would.
struct CurveKeys {
    var client: CurveKeyPair
    var server: [UInt8]

    func configure(_ socket: borrowing Socket) throws {
        try socket.set(.curveServerKey, server)
        try socket.set(.curvePublicKey, client.publicKey)
        try socket.set(.curveSecretKey, client.secretKey)
    }
}

/// Requests used across the tests.
enum Requests {
    static func submit(
        name: String = "Reza Shirazian", email: String = "reza@example.com", services: [String] = ["Oil Change"],
        trim: String? = "EX", mechanic: String? = nil, key: String? = nil, book: Bool = false, id: Any = "s"
    ) -> [String: Any] {
        var car: [String: Any] = ["make": "Honda", "model": "Civic", "year": 2014]
        if let trim { car["trim"] = trim }
        var request: [String: Any] = [
            "v": 1, "op": "submit", "id": id,
            "customer": ["name": name, "email": email, "address": "N Rengstorff Ave Mountain View"],
            "car": car, "services": services, "book": book,
        ]
        if let mechanic { request["mechanic"] = mechanic }
        if let key { request["idempotencyKey"] = key }
        return request
    }

    static func op(_ name: String, _ fields: [String: Any] = [:]) -> [String: Any] {
        var request: [String: Any] = ["v": 1, "op": name]
        for (key, value) in fields { request[key] = value }
        return request
    }
}

extension Dictionary where Key == String, Value == Any {
    subscript(object key: String) -> [String: Any]? { self[key] as? [String: Any] }
    var errorCode: String? { self[object: "error"]?["code"] as? String }
    var quote: [String: Any]? { self[object: "quote"] }
    var quoteID: Int { (self.quote?["id"] as? Int) ?? -1 }
}
