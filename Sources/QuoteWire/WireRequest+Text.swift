import QuoteCore

extension WireRequest {
    /// How a list past ``QuoteLimits/maximumServices`` items is refused.
    static let tooManyItems = "has more than \(QuoteLimits.maximumServices) items"

    /// The first text field that quoted refuses, as the error to reply with: a control or
    /// bidirectional-override character (``TextHygiene``), a value longer than its limit
    /// (``QuoteLimits``), more than ``QuoteLimits/maximumServices`` services, or an
    /// idempotency key that is not 1 to 255 printable ASCII characters. Both decoders run it after a frame
    /// decoded, so they agree; its work is linear in the request.
    func textError() -> WireError? {
        let short = QuoteLimits.maximumTextLength
        let long = QuoteLimits.maximumLongTextLength
        if case .string(let text) = id, let error = Self.check(text, "id", short) { return error }
        if let error = Self.check(op, "op", short) { return error }
        if let customer {
            if let error = Self.check(customer.name, "customer.name", short) { return error }
            if let error = Self.check(customer.email, "customer.email", short) { return error }
            if let error = Self.check(customer.address, "customer.address", long) { return error }
        }
        if let car {
            if let error = Self.check(car.make, "car.make", short) { return error }
            if let error = Self.check(car.model, "car.model", short) { return error }
            if let error = Self.check(car.trim, "car.trim", short) { return error }
        }
        if let services {
            if services.count > QuoteLimits.maximumServices { return Self.refusal("services", Self.tooManyItems) }
            for (index, service) in services.enumerated() {
                if let error = Self.check(service, "services[\(index)]", short) { return error }
            }
        }
        for (value, field) in [(mechanic, "mechanic"), (coupon, "coupon"), (state, "state"), (skill, "skill")] {
            if let error = Self.check(value, field, short) { return error }
        }
        if var key = idempotencyKey {
            // Printable ASCII, so that a length in bytes is a length in characters too.
            let printable = key.withUTF8 { bytes in bytes.allSatisfy { (0x20...0x7E).contains($0) } }
            if !printable || key.isEmpty || key.utf8.count > QuoteLimits.maximumIdempotencyKeyBytes {
                return Self.refusal(
                    "idempotencyKey",
                    "must be 1 to \(QuoteLimits.maximumIdempotencyKeyBytes) printable ASCII characters (\(key.utf8.count) bytes given)"
                )
            }
        }
        for (value, field) in [(make, "make"), (model, "model"), (trim, "trim"), (price, "price")] {
            if let error = Self.check(value, field, short) { return error }
        }
        return Self.check(reason, "reason", long)
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
        guard var text else { return nil }
        // Plain printable ASCII, the usual case, in one pass over the bytes.
        let plain: Int? = text.withUTF8 { bytes in
            for byte in bytes where byte < 0x20 || byte >= 0x7F { return nil }
            return bytes.count
        }
        if let plain {
            return plain > maximum ? refusal(field, "is longer than \(maximum) characters") : nil
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

    private static func refusal(_ field: String, _ message: String) -> WireError {
        WireError(
            code: .invalidRequest, message: "\(field) \(message)", problems: [Problem(field: field, message: message)])
    }
}
