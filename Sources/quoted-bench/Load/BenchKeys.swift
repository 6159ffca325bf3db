import Foundation
import ZeroMQ

/// CURVE keys for a point measured with `--curve`: quoted's server certificate and one
/// operator client (which may do everything and subscribe), written where quoted reads them,
/// as `quoted keygen` would.
struct BenchKeys: Sendable {
    let server: CurveKeyPair
    let client: CurveKeyPair
    let directory: URL

    /// Generates both pairs into a fresh directory.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "quoted-bench-keys-\(UUID().uuidString.prefix(8))")
        let server = try Certificate.generate(metadata: ["name": "quoted"])
        _ = try server.save(named: "quoted", in: directory.path)
        let client = try Certificate.generate(metadata: ["name": "bench", "role": "operator"])
        _ = try client.publicCertificate.save(named: "bench", in: directory.appendingPathComponent("clients").path)
        self.server = try server.keyPair.orThrow("no server secret")
        self.client = try client.keyPair.orThrow("no client secret")
    }

    /// quoted's flags for these keys.
    var daemonArguments: [String] {
        [
            "--server-key", directory.appendingPathComponent("quoted.key_secret").path, "--clients",
            directory.appendingPathComponent("clients").path,
        ]
    }

    /// Makes `socket` a CURVE client of quoted with the bench's key; before it connects.
    func configure(_ socket: borrowing Socket) throws {
        try socket.set(.curveServerKey, server.publicKey)
        try socket.set(.curvePublicKey, client.publicKey)
        try socket.set(.curveSecretKey, client.secretKey)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

extension Optional {
    fileprivate func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw BenchError(message) }
        return self
    }
}
