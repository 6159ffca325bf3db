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
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma[needsComma.count - 1] = false
    }

    /// Writes a dynamic key, escaped.
    mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) {
        separator()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
                case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
                case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
                case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
                case 0..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ value: Int64) {
        separator()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    mutating func date(_ value: Date) {
        string(value.formatted(WireCodec.timeFormat))
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

    mutating func event(_ value: WireEvent) {
        beginObject()
        field("v", value.v)
        field("seq", value.seq)
        field("type", value.type)
        field("at", value.at)
        field("quoteId", value.quoteId)
        field("from", value.from)
        field("to", value.to)
        if let quote = value.quote {
            key("quote")
            self.quote(quote)
        }
        if let mechanic = value.mechanic {
            key("mechanic")
            self.mechanic(mechanic)
        }
        endObject()
    }

    mutating func reply(_ value: WireReply) {
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
        if let quote = value.quote {
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
                key(name)
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
