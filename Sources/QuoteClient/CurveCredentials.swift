public import ZeroMQ

/// What a client needs to reach a quoted with `security`: its own key pair (a secret
/// certificate whose public half is in quoted's clients directory) and quoted's public key.
public struct CurveCredentials: Sendable, Hashable {
    /// The client's key pair.
    public var client: CurveKeyPair
    /// quoted's public key.
    public var serverKey: [UInt8]

    /// Credentials from known keys.
    public init(client: CurveKeyPair, serverKey: [UInt8]) {
        self.client = client
        self.serverKey = serverKey
    }

    /// Reads the client's secret certificate (`NAME.key_secret`) and quoted's public one
    /// (`quoted.key`; a secret one works too), both czmq `zcert` files.
    public init(keyFile: String, serverKeyFile: String) throws(QuotedError) {
        do {
            guard let pair = try Certificate.load(keyFile).keyPair else {
                throw QuotedError(
                    .usage, "\(keyFile) has no secret-key; --key takes the secret certificate (NAME.key_secret)")
            }
            client = pair
            serverKey = try Certificate.load(serverKeyFile).publicKey
        } catch let error as CertificateError {
            throw QuotedError(.usage, error.message)
        } catch let error as QuotedError {
            throw error
        } catch {
            throw QuotedError(.usage, "\(error)")
        }
    }

    /// Makes `socket` a CURVE client with these keys; before it connects.
    public func configure(_ socket: borrowing Socket) throws(ZeroMQError) {
        try socket.set(.curveServerKey, serverKey)
        try socket.set(.curvePublicKey, client.publicKey)
        try socket.set(.curveSecretKey, client.secretKey)
    }
}
