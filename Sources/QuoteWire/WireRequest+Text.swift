import QuoteCore

extension WireRequest {
    /// How a list past `QuoteLimits.maximumServices` items is refused.
    static let tooManyItems = "has more than \(QuoteLimits.maximumServices) items"

    /// The first text field that quoted refuses, as the error to reply with: a control or
    /// bidirectional-override character (`TextHygiene`), a value longer than its limit
    /// (`QuoteLimits`), more than `QuoteLimits.maximumServices` services, or an
    /// idempotency key that is not 1 to 255 printable ASCII characters. Both decoders run it after a frame
    /// decoded, so they agree; its work is linear in the request. With `knownPlain` (the fast
    /// parser saw only printable ASCII without escapes), only lengths are looked at.
    func textError(knownPlain: Bool = false) -> WireError? {
        func check(_ text: String?, _ field: @autoclosure () -> String, _ maximum: Int) -> WireError? {
            guard let text else { return nil }
            if knownPlain {
                return text.utf8.count > maximum ? Self.refusal(field(), "is longer than \(maximum) characters") : nil
            }
            return Self.check(text, field(), maximum)
        }
        let short = QuoteLimits.maximumTextLength
        let long = QuoteLimits.maximumLongTextLength
        if case .string(let text) = id, let error = check(text, "id", short) { return error }
        if case .outOfRange = id { return Self.refusal("id", "must be a string or an integer within 64 bits") }
        if let error = check(op, "op", short) { return error }
        if let customer {
            if let error = check(customer.name, "customer.name", short) { return error }
            if let error = check(customer.email, "customer.email", short) { return error }
            if let error = check(customer.address, "customer.address", long) { return error }
        }
        if let error = check(customerSearch, "customer", short) { return error }
        if let car {
            if let error = check(car.make, "car.make", short) { return error }
            if let error = check(car.model, "car.model", short) { return error }
            if let error = check(car.trim, "car.trim", short) { return error }
        }
        if let services {
            if services.count > QuoteLimits.maximumServices { return Self.refusal("services", Self.tooManyItems) }
            for (index, service) in services.enumerated() {
                if let error = check(service, "services[\(index)]", short) { return error }
            }
        }
        // One field at a time, not a list of them: this runs for every request.
        if let error = check(mechanic, "mechanic", short) { return error }
        if let error = check(coupon, "coupon", short) { return error }
        if let error = check(state, "state", short) { return error }
        if let error = check(skill, "skill", short) { return error }
        if let error = check(name, "name", short) { return error }
        if var key = idempotencyKey {
            // Printable ASCII, so that a length in bytes is a length in characters too.
            let printable = knownPlain || key.withUTF8 { bytes in bytes.allSatisfy { (0x20...0x7E).contains($0) } }
            if !printable || key.isEmpty || key.utf8.count > QuoteLimits.maximumIdempotencyKeyBytes {
                return Self.refusal(
                    "idempotencyKey",
                    "must be 1 to \(QuoteLimits.maximumIdempotencyKeyBytes) printable ASCII characters (\(key.utf8.count) bytes given)"
                )
            }
        }
        if let error = check(make, "make", short) { return error }
        if let error = check(model, "model", short) { return error }
        if let error = check(trim, "trim", short) { return error }
        if let error = check(price, "price", short) { return error }
        return check(reason, "reason", long)
    }

    /// Whether `id` may be echoed in a reply: a number, or a string that passes the checks
    /// of any text field.
    static func isEchoable(_ id: RequestID?) -> Bool {
        guard case .string(let text) = id else { return true }
        return check(text, "id", QuoteLimits.maximumTextLength) == nil
    }

    /// The refusal of `text` at `field`, if it has a forbidden character or more than
    /// `maximum` characters.
    private static func check(_ text: String?, _ field: String, _ maximum: Int) -> WireError? {
        guard let text else { return nil }
        // Plain printable ASCII, the usual case, in one pass over the bytes.
        if text.utf8.withContiguousStorageIfAvailable(isPrintableASCII) == true {
            return text.utf8.count > maximum ? refusal(field, "is longer than \(maximum) characters") : nil
        }
        var count = 0
        for scalar in text.unicodeScalars {
            if TextHygiene.isForbidden(scalar) {
                return refusal(field, "contains the control character \(TextHygiene.name(scalar))")
            }
            count += 1
        }
        return count > maximum ? refusal(field, "is longer than \(maximum) characters") : nil
    }

    /// Whether every byte is printable ASCII (0x20 to 0x7E), eight bytes a step.
    private static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A byte with its high bit set, one below 0x20, or DEL (0x7F, which plus one sets
            // the high bit): each leaves a high bit in this mask.
            let below = (word &- ones &* 0x20) & ~word
            let del = (word &+ ones) & ~word
            if (word | below | del) & highs != 0 { return false }
            offset += 8
        }
        for byte in raw[offset...] where byte < 0x20 || byte >= 0x7F { return false }
        return true
    }

    private static func refusal(_ field: String, _ message: String) -> WireError {
        WireError(
            code: .invalidRequest, message: "\(field) \(message)", problems: [Problem(field: field, message: message)])
    }
}
