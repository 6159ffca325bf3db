import Foundation
import Logging
import QuoteWire
import Testing
import ZeroMQ

@testable import QuoteDaemon

/// The allow-list and the ZAP handler's decisions, on certificates written to a temporary
/// directory as `quoted keygen` writes them. (The end-to-end security suite runs the same
/// decisions through real CURVE handshakes.)
@Suite("The allow-list")
struct AccessControlTests {
    let directory: String
    let clients: String
    /// Each listed client's public key, by certificate name.
    var keys: [String: [UInt8]] = [:]
    let access: AccessControl

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("acl-\(UUID().uuidString)").path
        clients = directory + "/clients"
        try FileManager.default.createDirectory(atPath: clients, withIntermediateDirectories: true)
        _ = try Certificate.generate().save(named: "quoted", in: directory)
        for (name, role) in [("ops", "operator"), ("shop", "client"), ("watcher", "observer")] {
            let certificate = try Certificate.generate(metadata: ["name": name, "role": role])
            try certificate.save(named: name, in: clients)
            // The public certificate only, as a client hands it over.
            try? FileManager.default.removeItem(atPath: clients + "/\(name).key_secret")
            keys[name] = certificate.publicKey
        }
        access = try AccessControl(
            serverKeyFile: directory + "/quoted.key_secret", clientsDirectory: clients, logger: Logger(label: "test"))
    }

    /// A ZAP request of a CURVE client with `key`, on `domain`.
    private static func handshake(_ key: [UInt8], domain: String) -> ZAP.Request? {
        ZAP.Request(frames: [
            Array("1.0".utf8), Array("7".utf8), Array(domain.utf8), Array("127.0.0.1".utf8), [],
            Array("CURVE".utf8), key,
        ])
    }

    /// The status of the ZAP handler's reply, and the user id it names the connection by.
    private func answer(
        _ key: [UInt8], domain: String = AccessControl.commandsDomain, limit: ConnectionCount.Limit? = nil
    ) throws -> (status: String, userId: String) {
        let reply = access.authenticate(try #require(Self.handshake(key, domain: domain)), limit: limit)
        return (String(decoding: reply[2], as: UTF8.self), String(decoding: reply[4], as: UTF8.self))
    }

    @Test("a listed key is let in under its key, and its requests are authorized by its name and role")
    func listedKey() throws {
        let shop = try #require(keys["shop"])
        let (status, userId) = try answer(shop)
        #expect(status == "200")
        #expect(userId == (try Z85.encode(shop)))
        #expect(access.caller(userId: userId) == Caller(name: "shop", role: .client))
    }

    @Test("an unlisted key, and a peer that is not CURVE, are refused")
    func unlisted() throws {
        let stranger = try Certificate.generate().publicKey
        #expect(try answer(stranger).status == "400")
        let plain = try #require(
            ZAP.Request(frames: [
                Array("1.0".utf8), Array("8".utf8), Array(AccessControl.commandsDomain.utf8), Array("::1".utf8), [],
                Array("NULL".utf8),
            ]))
        #expect(String(decoding: access.authenticate(plain)[2], as: UTF8.self) == "400")
    }

    @Test("only roles that read every quote may subscribe to the events")
    func subscribing() throws {
        #expect(try answer(#require(keys["ops"]), domain: AccessControl.eventsDomain).status == "200")
        #expect(try answer(#require(keys["watcher"]), domain: AccessControl.eventsDomain).status == "200")
        #expect(try answer(#require(keys["shop"]), domain: AccessControl.eventsDomain).status == "400")
    }

    @Test(
        "past a connection limit even a listed key is refused", arguments: [ConnectionCount.Limit.total, .perAddress])
    func full(limit: ConnectionCount.Limit) throws {
        #expect(try answer(#require(keys["ops"]), limit: limit).status == "400")
        #expect(try answer(#require(keys["ops"])).status == "200")
    }

    @Test("a key withdrawn by a reload is refused from its next request, and its subscriptions are dropped")
    func withdrawal() throws {
        let userId = try Z85.encode(#require(keys["watcher"]))
        #expect(access.caller(userId: userId) != nil)
        try FileManager.default.removeItem(atPath: clients + "/watcher.key")
        let change = access.reload()
        #expect(change.removed == 1)
        #expect(access.caller(userId: userId) == nil, "fails closed at once")
        #expect(access.takeSubscriberRevocation(), "an observer could subscribe: the events socket drops them")
        #expect(!access.takeSubscriberRevocation(), "told once")
    }
}
