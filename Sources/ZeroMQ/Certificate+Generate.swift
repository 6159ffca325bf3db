extension Certificate {
    /// A new certificate with a fresh key pair and `metadata`.
    public static func generate(metadata: [String: String] = [:]) throws(ZeroMQError) -> Certificate {
        Certificate(keys: try CurveKeyPair.generate(), metadata: metadata)
    }
}
