/// A fingerprint of a submission exactly as the client sent it (every field, byte for byte,
/// and whether it asked to book and to wait), kept with the quote it created: a retry under
/// the same idempotency key is answered with that quote only if its fingerprint matches;
/// otherwise it is refused as a conflict. The request's `id` is not part of it, since a
/// retry may carry a new one.
///
/// A 64-bit multiply-xor hash over a length-prefixed encoding of the fields, eight bytes a
/// step: stable across processes and versions (it is stored), and linear in the
/// submission's size. An idempotency key is the
/// caller's own (keys are kept per client), so a collision could only confuse a caller with
/// itself.
public struct SubmissionDigest: RawRepresentable, Hashable, Sendable, Codable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The fingerprint of `submission` with its booking flags.
    public init(_ submission: borrowing Submission, book: Bool, wait: Bool) {
        var hasher = Hasher64()
        // Each part read once: every `submission.customer?.name` would copy the whole customer.
        let customer = submission.customer
        hasher.field(1, customer?.name)
        hasher.field(2, customer?.email)
        hasher.field(3, customer?.address)
        hasher.byte(Self.presence(customer))
        let car = submission.car
        hasher.field(4, car?.make)
        hasher.field(5, car?.model)
        hasher.byte(6)
        hasher.integer(car?.year.map { UInt64(bitPattern: Int64($0)) } ?? .max)
        hasher.field(7, car?.trim)
        hasher.byte(Self.presence(car))
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

    /// 1 when `value` is there, else 0. Matched, not compared with `nil`: here the comparison
    /// compiled to a copy of the customer or car into a pair, destroyed after (`callgrind`).
    private static func presence<Value>(_ value: Value?) -> UInt8 {
        switch value {
        case .none: 0
        case .some: 1
        }
    }
}

/// Mixes eight bytes at a time: xor in, multiply by an odd constant, fold the high half back.
private struct Hasher64 {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func word(_ word: UInt64) {
        let mixed = (value ^ word) &* 0x9E37_79B9_7F4A_7C15
        value = mixed ^ (mixed >> 29)
    }

    mutating func byte(_ byte: UInt8) {
        word(UInt64(byte) | 0x100)
    }

    mutating func integer(_ number: UInt64) {
        word(number)
    }

    /// A tagged optional text field: absent, or its length and bytes.
    mutating func field(_ tag: UInt8, _ text: String?) {
        byte(tag)
        guard let text else { return byte(0) }
        byte(1)
        text.withUTF8Bytes { bytes($0) }
    }

    private mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        integer(UInt64(bytes.count))
        var offset = 0
        while offset + 8 <= bytes.count {
            word(UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        // The bytes left, fewer than eight, the first most significant.
        let remaining = bytes.count - offset
        var tail: UInt64 = 0
        if remaining > 0 && bytes.count >= 8 {
            // The text's last eight bytes as one word: those left are its last in memory, the
            // lowest once the word's bytes are reversed.
            let last = UnsafeRawBufferPointer(bytes).loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
            tail = UInt64(littleEndian: last).byteSwapped & (UInt64.max >> UInt64(64 - 8 * remaining))
        } else {
            for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
        }
        word(tail)
    }
}
