/// A fingerprint of a submission exactly as the client sent it (every field, byte for byte,
/// and whether it asked to book and to wait), kept with the quote it created: a retry under
/// the same idempotency key is answered with that quote only if its fingerprint matches;
/// otherwise it is refused as a conflict. The request's `id` is not part of it, since a
/// retry may carry a new one.
///
/// 64-bit FNV-1a over a length-prefixed encoding of the fields: stable across processes and
/// versions (it is stored), and linear in the submission's size. An idempotency key is the
/// caller's own (keys are kept per client), so a collision could only confuse a caller with
/// itself.
public struct SubmissionDigest: RawRepresentable, Hashable, Sendable, Codable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The fingerprint of `submission` with its booking flags.
    public init(_ submission: Submission, book: Bool, wait: Bool) {
        var hasher = Hasher64()
        hasher.field(1, submission.customer?.name)
        hasher.field(2, submission.customer?.email)
        hasher.field(3, submission.customer?.address)
        hasher.byte(submission.customer == nil ? 0 : 1)
        hasher.field(4, submission.car?.make)
        hasher.field(5, submission.car?.model)
        hasher.field(6, submission.car?.year.map { String($0) })
        hasher.field(7, submission.car?.trim)
        hasher.byte(submission.car == nil ? 0 : 1)
        if let services = submission.services {
            hasher.byte(8)
            hasher.integer(UInt64(services.count))
            for service in services { hasher.field(9, service) }
        }
        hasher.field(10, submission.mechanic)
        hasher.field(11, submission.coupon)
        hasher.byte(book ? 1 : 0)
        hasher.byte(wait ? 1 : 0)
        rawValue = hasher.value
    }
}

/// FNV-1a, 64 bits.
private struct Hasher64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func byte(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    mutating func integer(_ number: UInt64) {
        var number = number
        for _ in 0..<8 {
            byte(UInt8(truncatingIfNeeded: number))
            number >>= 8
        }
    }

    /// A tagged optional text field: absent, or its length and bytes.
    mutating func field(_ tag: UInt8, _ text: String?) {
        byte(tag)
        guard var text else { return byte(0) }
        byte(1)
        text.withUTF8 { bytes in
            integer(UInt64(bytes.count))
            for value in bytes { byte(value) }
        }
    }
}
