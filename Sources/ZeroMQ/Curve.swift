internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A CURVE key pair (Curve25519), as used by ZeroMQ's encryption and authentication.
///
/// Keys are 32 bytes; ZeroMQ exchanges and configures them as 40-character Z85 text.
public struct CurveKeyPair: Sendable, Hashable {
    /// The public key, 32 bytes: hand it to peers.
    public let publicKey: [UInt8]
    /// The secret key, 32 bytes: keep it to this side.
    public let secretKey: [UInt8]

    /// Creates a key pair from known keys, such as ones read from a key file.
    public init(publicKey: [UInt8], secretKey: [UInt8]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Generates a fresh key pair from the system's randomness.
    public static func generate() throws(ZeroMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else {
            throw ZeroMQError.last("zmq_curve_keypair")
        }
        let publicZ85 = String(decoding: publicText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let secretZ85 = String(decoding: secretText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return try CurveKeyPair(publicKey: Z85.decode(publicZ85), secretKey: Z85.decode(secretZ85))
    }

    /// Derives the key pair of a secret key, so only the secret need be stored.
    public init(secretKey: [UInt8]) throws(ZeroMQError) {
        let secretZ85 = try Z85.encode(secretKey)
        var publicText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicText, secretZ85) == 0 else {
            throw ZeroMQError.last("zmq_curve_public")
        }
        let publicZ85 = String(decoding: publicText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        self.init(publicKey: try Z85.decode(publicZ85), secretKey: secretKey)
    }
}

/// ZeroMQ's Z85 text encoding of binary data (RFC 32), used for CURVE keys in text files.
public enum Z85 {
    /// Encodes `bytes`, whose count must be a multiple of 4.
    public static func encode(_ bytes: [UInt8]) throws(ZeroMQError) -> String {
        guard bytes.count % 4 == 0 else {
            throw ZeroMQError(errno: EINVAL, operation: "zmq_z85_encode(\(bytes.count) bytes)")
        }
        var text = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        guard zmq_z85_encode(&text, bytes, bytes.count) != nil else {
            throw ZeroMQError.last("zmq_z85_encode")
        }
        return String(decoding: text.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes Z85 `text`, whose length must be a multiple of 5, with only Z85 characters.
    public static func decode(_ text: String) throws(ZeroMQError) -> [UInt8] {
        let utf8 = Array(text.utf8)
        let alphabet = Array(
            "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#".utf8)
        guard utf8.count % 5 == 0, utf8.allSatisfy({ alphabet.contains($0) }) else {
            throw ZeroMQError(errno: EINVAL, operation: "zmq_z85_decode(\(utf8.count) characters)")
        }
        var bytes = [UInt8](repeating: 0, count: utf8.count * 4 / 5)
        guard zmq_z85_decode(&bytes, text) != nil else { throw ZeroMQError.last("zmq_z85_decode") }
        return bytes
    }
}
