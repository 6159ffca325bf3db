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
        // One pass over the UTF-8 bytes, over the contiguous bytes, not `String.UTF8View`'s
        // iterator, which costs far more per byte; the counts kept in the closure's own
        // locals. The newlines outside ASCII are the three multi-byte sequences NEL (C2 85),
        // LINE SEPARATOR (E2 80 A8) and PARAGRAPH SEPARATOR (E2 80 A9), recognised by their
        // last byte and the two before it (`previous`, the last two bytes, newest lowest).
        email.withUTF8Bytes { bytes in
            var localLength = 0
            var ats = 0
            var dots = 0
            var labelLength = 0
            var previous: UInt16 = 0
            for byte in bytes {
                // Letters and the rest of plain ASCII above `@`, the commonest bytes: counted
                // at once.
                if byte > UInt8(ascii: "@") && byte < 0x80 {
                    if ats == 0 { localLength &+= 1 } else { labelLength &+= 1 }
                } else {
                    switch byte {
                    case 0x20, 0x0A...0x0D: return false
                    case 0x85 where previous & 0xFF == 0xC2: return false
                    case 0xA8...0xA9 where previous == 0xE280: return false
                    case UInt8(ascii: "@"):
                        ats &+= 1
                        labelLength = 0
                    case UInt8(ascii: ".") where ats == 1:
                        if labelLength == 0 { return false }
                        dots &+= 1
                        labelLength = 0
                    default:
                        if ats == 0 { localLength &+= 1 } else { labelLength &+= 1 }
                    }
                }
                previous = previous &<< 8 | UInt16(byte)
            }
            return ats == 1 && localLength > 0 && dots >= 1 && labelLength > 0
        }
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
