/// The person asking for the quote.
public struct Customer: Hashable, Sendable, Codable {
    /// Full name.
    public var name: String
    /// Where to send the quote and the receipt.
    public var email: String
    /// Where the work happens.
    public var address: String

    /// Creates a customer.
    public init(name: String, email: String, address: String) {
        self.name = name
        self.email = email
        self.address = address
    }

    /// Whether `email` looks like an address mail could reach: one `@`, something before it,
    /// a dotted domain after it, and no spaces.
    public static func isPlausibleEmail(_ email: String) -> Bool {
        // One pass over the bytes for plain ASCII (nearly every address); the rare rest by
        // characters, since a non-ASCII newline would hide in a multi-byte sequence.
        var localLength = 0
        var ats = 0
        var dots = 0
        var labelLength = 0
        for byte in email.utf8 {
            switch byte {
            case 0x80...: return isPlausibleEmailSlowly(email)
            case 0x20, 0x0A...0x0D: return false
            case UInt8(ascii: "@"):
                ats += 1
                labelLength = 0
            case UInt8(ascii: ".") where ats == 1:
                if labelLength == 0 { return false }
                dots += 1
                labelLength = 0
            default:
                if ats == 0 { localLength += 1 } else { labelLength += 1 }
            }
        }
        return ats == 1 && localLength > 0 && dots >= 1 && labelLength > 0
    }

    /// ``isPlausibleEmail(_:)`` by characters, for addresses that are not plain ASCII.
    private static func isPlausibleEmailSlowly(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !email.contains(where: { $0 == " " || $0.isNewline })
        else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
    }
}

/// The car to be worked on. Make and model are required; year and trim are needed for an
/// automatic price.
public struct Car: Hashable, Sendable, Codable {
    public var make: String
    public var model: String
    public var year: Int?
    public var trim: String?

    /// Creates a car description.
    public init(make: String, model: String, year: Int? = nil, trim: String? = nil) {
        self.make = make
        self.model = model
        self.year = year
        self.trim = trim
    }
}
