import Foundation
import QuoteCore

/// Writes JSON straight into a byte buffer. Replies and events go out through this, not
/// `JSONEncoder`: on this machine Foundation's encoder manages a few tens of thousands of
/// nested quotes a second, a fraction of what one I/O thread must publish.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    init(capacity: Int = 1_024) {
        bytes.reserveCapacity(capacity)
    }

    mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma.removeLast()
    }

    /// Writes `"name":` inside an object.
    mutating func key(_ name: StaticString) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        // Two appends, not an array literal: that allocated an array per key.
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    /// Writes a dynamic key, escaped.
    mutating func key(dynamic name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Most text needs no escaping: copy it whole, and only byte by byte when it does.
            guard utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                bytes.append(contentsOf: utf8)
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    bytes.append(92)
                    bytes.append(byte)
                case 0x0A: escape(UInt8(ascii: "n"))
                case 0x0D: escape(UInt8(ascii: "r"))
                case 0x09: escape(UInt8(ascii: "t"))
                case 0..<0x20:
                    escape(UInt8(ascii: "u"))
                    bytes.append(48)
                    bytes.append(48)
                    bytes.append(Self.hexDigit(byte >> 4))
                    bytes.append(Self.hexDigit(byte & 0xF))
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ letter: UInt8) {
        bytes.append(92)
        bytes.append(letter)
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? 48 + value : UInt8(ascii: "a") + value - 10
    }

    mutating func int(_ value: Int64) {
        separator()
        appendDigits(value)
    }

    /// Writes the decimal digits of `value`, without going through a `String`.
    private mutating func appendDigits(_ value: Int64, width: Int = 1) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Least significant digit first, then turned around in place.
        let start = bytes.count
        var magnitude = value.magnitude
        repeat {
            bytes.append(48 + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0 || bytes.count - start < width
        var (low, high) = (start, bytes.count - 1)
        while low < high {
            bytes.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes `value` as RFC 3339 in UTC with milliseconds (`2026-11-23T02:40:00.123Z`),
    /// exactly as `WireCodec.timeFormat` does, by arithmetic: the format style took longer
    /// than the rest of a quote's JSON together.
    mutating func date(_ value: Date) {
        // Whole milliseconds, truncated as the format style truncates.
        let interval = value.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 200_000_000_000 else {
            string(value.formatted(WireCodec.timeFormat))
            return
        }
        let milliseconds = Int64((interval * 1_000).rounded(.down))
        let (days, millisecondOfDay) = Self.floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = Self.civil(fromDays: days)
        guard (0...9_999).contains(year) else {
            string(value.formatted(WireCodec.timeFormat))
            return
        }
        separator()
        bytes.append(UInt8(ascii: "\""))
        appendDigits(year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(day, width: 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(millisecondOfDay / 3_600_000, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(millisecondOfDay / 60_000 % 60, width: 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(millisecondOfDay / 1_000 % 60, width: 2)
        bytes.append(UInt8(ascii: "."))
        appendDigits(millisecondOfDay % 1_000, width: 3)
        bytes.append(UInt8(ascii: "Z"))
        bytes.append(UInt8(ascii: "\""))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    /// Year, month and day of the day `days` after 1970-01-01 in the proleptic Gregorian
    /// calendar (Howard Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    // Convenience: a key and its value, skipped when the value is absent.

    mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        int(value)
    }

    mutating func field(_ name: StaticString, _ value: Int?) {
        field(name, value.map(Int64.init))
    }

    mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bool(value)
    }

    mutating func field(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        date(value)
    }

    private mutating func separator() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }
}

// MARK: The protocol's values

extension JSONWriter {
    mutating func customer(_ value: Customer) {
        beginObject()
        field("name", value.name)
        field("email", value.email)
        field("address", value.address)
        endObject()
    }

    mutating func car(_ value: Car) {
        beginObject()
        field("make", value.make)
        field("model", value.model)
        field("year", value.year)
        field("trim", value.trim)
        endObject()
    }

    mutating func lines(_ values: [WireQuote.Line]) {
        beginArray()
        for line in values {
            beginObject()
            field("name", line.name)
            field("priceCents", line.priceCents)
            endObject()
        }
        endArray()
    }

    mutating func mechanic(_ value: WireQuote.WireMechanic) {
        beginObject()
        field("id", value.id)
        field("name", value.name)
        field("skill", value.skill)
        endObject()
    }

    mutating func problems(_ values: [Problem]) {
        beginArray()
        for problem in values {
            beginObject()
            field("field", problem.field)
            field("message", problem.message)
            endObject()
        }
        endArray()
    }

    mutating func error(_ value: WireError) {
        beginObject()
        field("code", value.code.rawValue)
        field("message", value.message)
        if let problems = value.problems {
            key("problems")
            self.problems(problems)
        }
        endObject()
    }

    mutating func quote(_ value: WireQuote) {
        beginObject()
        field("id", value.id)
        field("state", value.state)
        field("message", value.message)
        key("customer")
        customer(value.customer)
        key("car")
        car(value.car)
        key("services")
        lines(value.services)
        field("preferredMechanic", value.preferredMechanic)
        field("coupon", value.coupon)
        field("currency", value.currency)
        field("priceCents", value.priceCents)
        field("price", value.price)
        field("discountCents", value.discountCents)
        field("manualPrice", value.manualPrice)
        if let mechanic = value.mechanic {
            key("mechanic")
            self.mechanic(mechanic)
        }
        if let receipt = value.receipt {
            key("receipt")
            beginObject()
            key("lines")
            lines(receipt.lines)
            field("subtotalCents", receipt.subtotalCents)
            field("coupon", receipt.coupon)
            field("discountCents", receipt.discountCents)
            field("totalCents", receipt.totalCents)
            field("total", receipt.total)
            key("mechanic")
            mechanic(receipt.mechanic)
            key("customer")
            customer(receipt.customer)
            field("completedAt", receipt.completedAt)
            endObject()
        }
        if let reasons = value.pendingReasons {
            key("pendingReasons")
            beginArray()
            for reason in reasons {
                beginObject()
                field("code", reason.code)
                field("field", reason.field)
                field("message", reason.message)
                endObject()
            }
            endArray()
        }
        field("cancelledFrom", value.cancelledFrom)
        field("submittedAt", value.submittedAt)
        field("updatedAt", value.updatedAt)
        endObject()
    }

    /// Writes a value already encoded as JSON, such as a quote shared by a reply and an event.
    mutating func raw(_ json: [UInt8]) {
        separator()
        bytes.append(contentsOf: json)
    }

    mutating func event(_ value: WireEvent, quote encodedQuote: EncodedQuote? = nil) {
        beginObject()
        field("v", value.v)
        field("seq", value.seq)
        field("type", value.type)
        field("at", value.at)
        field("quoteId", value.quoteId)
        field("from", value.from)
        field("to", value.to)
        if let encodedQuote {
            key("quote")
            raw(encodedQuote.json)
        } else if let quote = value.quote {
            key("quote")
            self.quote(quote)
        }
        if let mechanic = value.mechanic {
            key("mechanic")
            self.mechanic(mechanic)
        }
        endObject()
    }

    mutating func reply(_ value: WireReply, quote encodedQuote: EncodedQuote? = nil) {
        beginObject()
        field("v", value.v)
        if let id = value.id {
            key("id")
            switch id {
            case .string(let text): string(text)
            case .number(let number): int(number)
            }
        }
        field("ok", value.ok)
        if let error = value.error {
            key("error")
            self.error(error)
        }
        if let encodedQuote {
            key("quote")
            raw(encodedQuote.json)
        } else if let quote = value.quote {
            key("quote")
            self.quote(quote)
        }
        if let history = value.history {
            key("history")
            beginArray()
            for step in history {
                beginObject()
                field("from", step.from)
                field("to", step.to)
                field("at", step.at)
                field("seq", step.seq)
                endObject()
            }
            endArray()
        }
        field("replayed", value.replayed)
        if let bookingError = value.bookingError {
            key("bookingError")
            error(bookingError)
        }
        if let quotes = value.quotes {
            key("quotes")
            beginArray()
            for quote in quotes { self.quote(quote) }
            endArray()
        }
        field("next", value.next)
        if let mechanics = value.mechanics {
            key("mechanics")
            beginArray()
            for mechanic in mechanics {
                beginObject()
                field("id", mechanic.id)
                field("name", mechanic.name)
                field("skill", mechanic.skill)
                field("busy", mechanic.busy)
                field("quoteId", mechanic.quoteId)
                field("freeSince", mechanic.freeSince)
                endObject()
            }
            endArray()
        }
        if let services = value.services {
            key("services")
            beginArray()
            for service in services {
                beginObject()
                field("name", service.name)
                field("minimumSkill", service.minimumSkill)
                field("priceCents", service.priceCents)
                field("price", service.price)
                endObject()
            }
            endArray()
        }
        if let counts = value.counts {
            key("counts")
            beginObject()
            for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
                key(dynamic: name)
                int(Int64(count))
            }
            endObject()
        }
        if let events = value.events {
            key("events")
            beginArray()
            for event in events { self.event(event) }
            endArray()
        }
        field("lastSeq", value.lastSeq)
        field("pong", value.pong)
        endObject()
    }
}
