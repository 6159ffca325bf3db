import Bytes
package import Foundation
package import QuoteCore

/// The stored form of quotes and mechanics: a compact, versioned binary layout written and
/// read by hand. Foundation's JSON coders manage only ~10k nested quotes a second on this
/// machine, which would cap the store far below its fsync budget; this codec does ~1M.
///
/// Layout: a version byte (1), then fields in declaration order; integers as zig-zag
/// LEB128, strings as length and UTF-8, dates as the bits of their `Double` interval,
/// optionals behind a 0/1 byte. Append-only: a later field goes at the end, and a record
/// that ends before it reads it as absent (`submittedBy`).
package enum QuoteCodec {
    package static let version: UInt8 = 1

    package static func encode(_ quote: Quote) -> [UInt8] {
        var writer = Writer()
        writer.byte(version)
        writer.quote(quote)
        return writer.bytes
    }

    package static func encode(_ mechanic: Mechanic) -> [UInt8] {
        var writer = Writer()
        writer.byte(version)
        writer.mechanic(mechanic)
        return writer.bytes
    }

    /// A reassignment's record: the mechanic the quote left, then the quote as it is now.
    package static func encode(_ quote: Quote, reassignedFrom mechanic: Mechanic) -> [UInt8] {
        var writer = Writer()
        writer.byte(version)
        writer.mechanic(mechanic)
        writer.quote(quote)
        return writer.bytes
    }

    /// A change of skill's record: the mechanic as they are now, then their skill before.
    package static func encode(_ mechanic: Mechanic, previousSkill: Skill) -> [UInt8] {
        var writer = Writer()
        writer.byte(version)
        writer.mechanic(mechanic)
        writer.byte(UInt8(previousSkill.rawValue))
        return writer.bytes
    }

    /// Reads what ``encode(_:previousSkill:)`` wrote.
    package static func decodeSkillChange(_ data: some ContiguousBytes) throws -> (Mechanic, previous: Skill) {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            try reader.expectVersion()
            return (try reader.mechanic(), try reader.skill())
        }
    }

    /// A record of one number (a catalog's version).
    package static func encode(number: Int64) -> [UInt8] {
        var writer = Writer()
        writer.byte(version)
        writer.int(number)
        return writer.bytes
    }

    /// Reads what ``encode(number:)`` wrote.
    package static func decodeNumber(_ data: some ContiguousBytes) throws -> Int64 {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            try reader.expectVersion()
            return try reader.int()
        }
    }

    /// Reads what ``encode(_:reassignedFrom:)`` wrote.
    package static func decodeReassignment(_ data: some ContiguousBytes) throws -> (from: Mechanic, quote: Quote) {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            try reader.expectVersion()
            return (try reader.mechanic(), try reader.quote())
        }
    }

    package static func decodeQuote(_ data: some ContiguousBytes) throws -> Quote {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            try reader.expectVersion()
            return try reader.quote()
        }
    }

    package static func decodeMechanic(_ data: some ContiguousBytes) throws -> Mechanic {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            try reader.expectVersion()
            return try reader.mechanic()
        }
    }

    package struct CorruptRecord: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }
}

// MARK: Writing

/// Writes into a buffer of its own, through a pointer: appending to an `Array` checks its
/// uniqueness and room each time, which would be half the work of encoding a quote.
/// Noncopyable, so the buffer has one owner and is freed once.
private struct Writer: ~Copyable {
    private var output = ByteOutput(capacity: 512)

    /// What has been written, copied out.
    var bytes: [UInt8] { output.array }

    mutating func byte(_ value: UInt8) { output.append(value) }

    /// `value` as unsigned LEB128.
    mutating func unsigned(_ value: UInt64) { output.appendLEB128(value) }

    mutating func int(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func string(_ value: String) {
        value.withUTF8Bytes { utf8 in
            let length = utf8.count
            // Its length and bytes in one write when the length takes one byte, as most do.
            guard length < 0x80 else {
                output.appendLEB128(UInt64(length))
                return output.append(UnsafeRawBufferPointer(utf8))
            }
            output.write(upTo: length &+ 1) { target in
                target[0] = UInt8(truncatingIfNeeded: length)
                if let source = utf8.baseAddress { ByteOutput.copy(source, to: target + 1, count: length) }
                return length &+ 1
            }
        }
    }

    mutating func bool(_ value: Bool) { byte(value ? 1 : 0) }

    mutating func date(_ value: Date) {
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { output.append($0) }
    }

    mutating func optional<T>(_ value: T?, _ write: (inout Writer, T) -> Void) {
        if let value {
            byte(1)
            write(&self, value)
        } else {
            byte(0)
        }
    }

    mutating func array<T>(_ values: [T], _ write: (inout Writer, T) -> Void) {
        unsigned(UInt64(values.count))
        for value in values { write(&self, value) }
    }

    mutating func money(_ value: Money) {
        int(value.cents)
        string(value.currency.code)
    }

    mutating func service(_ value: Service) {
        string(value.name)
        byte(UInt8(value.minimumSkill.rawValue))
        money(value.price)
    }

    mutating func mechanic(_ value: Mechanic) {
        int(value.id.rawValue)
        string(value.name)
        byte(UInt8(value.skill.rawValue))
    }

    mutating func customer(_ value: Customer) {
        string(value.name)
        string(value.email)
        string(value.address)
    }

    mutating func lines(_ values: [LineItem]) {
        array(values) { writer, line in
            writer.string(line.service)
            writer.money(line.price)
        }
    }

    mutating func pricing(_ value: Pricing) {
        lines(value.lines)
        money(value.subtotal)
        optional(value.coupon) { $0.string($1) }
        money(value.discount)
        money(value.total)
        bool(value.isManual)
    }

    mutating func assignment(_ value: Assignment) {
        mechanic(value.mechanic)
        date(value.bookedAt)
    }

    mutating func quote(_ quote: Quote) {
        int(quote.id.rawValue)
        let request = quote.request
        customer(request.customer)
        string(request.car.make)
        string(request.car.model)
        optional(request.car.year) { $0.int(Int64($1)) }
        optional(request.car.trim) { $0.string($1) }
        array(request.services) { writer, requested in
            writer.string(requested.name)
            writer.optional(requested.listed) { $0.service($1) }
        }
        optional(request.preferredMechanic) { $0.mechanic($1) }
        optional(request.coupon) { writer, coupon in
            writer.string(coupon.code)
            switch coupon.discount {
            case .percent(let percent):
                writer.byte(0)
                writer.int(Int64(percent))
            case .amount(let amount):
                writer.byte(1)
                writer.money(amount)
            }
            writer.optional(coupon.expiresAt) { $0.date($1) }
        }
        switch quote.stage {
        case .submitted:
            byte(0)
        case .pending(let reasons):
            byte(1)
            array(reasons) { writer, reason in
                writer.string(reason.code)
                writer.string(reason.field)
                writer.string(reason.message)
            }
        case .ready(let pricing):
            byte(2)
            self.pricing(pricing)
        case .booked(let pricing, let assignment):
            byte(3)
            self.pricing(pricing)
            self.assignment(assignment)
        case .completed(let pricing, let assignment, let receipt):
            byte(4)
            self.pricing(pricing)
            self.assignment(assignment)
            lines(receipt.lines)
            money(receipt.subtotal)
            optional(receipt.coupon) { $0.string($1) }
            money(receipt.discount)
            money(receipt.total)
            mechanic(receipt.mechanic)
            customer(receipt.customer)
            date(receipt.completedAt)
        case .cancelled(let from, let reason):
            byte(5)
            byte(UInt8(QuoteStatus.allCases.firstIndex(of: from)!))
            optional(reason) { $0.string($1) }
        case .waiting(let pricing, let since, let mechanic):
            byte(6)
            self.pricing(pricing)
            date(since)
            optional(mechanic) { $0.mechanic($1) }
        }
        date(quote.submittedAt)
        date(quote.updatedAt)
        // Appended later: a record written before it ends here, and reads as nil.
        optional(quote.submittedBy) { $0.string($1) }
        optional(quote.submissionDigest) { $0.unsigned($1.rawValue) }
        optional(quote.notice) { $0.string($1) }
    }
}

// MARK: Reading

private struct Reader {
    let buffer: UnsafeRawBufferPointer
    var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    mutating func expectVersion() throws {
        let found = try byte()
        guard found == QuoteCodec.version else {
            throw QuoteCodec.CorruptRecord(
                description: "stored record has version \(found), expected \(QuoteCodec.version)")
        }
    }

    mutating func byte() throws -> UInt8 {
        guard offset < buffer.count else { throw QuoteCodec.CorruptRecord(description: "stored record is truncated") }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func unsigned() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            result |= UInt64(next & 0x7F) << shift
            if next < 0x80 { return result }
            shift += 7
            guard shift < 64 else { throw QuoteCodec.CorruptRecord(description: "stored integer is too long") }
        }
    }

    mutating func int() throws -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func string() throws -> String {
        guard let count = Int(exactly: try unsigned()), count <= buffer.count - offset else {
            throw QuoteCodec.CorruptRecord(description: "stored text is truncated")
        }
        defer { offset += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count]), as: UTF8.self)
    }

    mutating func bool() throws -> Bool { try byte() != 0 }

    mutating func date() throws -> Date {
        guard offset + 8 <= buffer.count else {
            throw QuoteCodec.CorruptRecord(description: "stored date is truncated")
        }
        let bits = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        offset += 8
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: bits)))
    }

    mutating func optional<T>(_ read: (inout Reader) throws -> T) throws -> T? {
        try byte() == 0 ? nil : try read(&self)
    }

    mutating func array<T>(_ read: (inout Reader) throws -> T) throws -> [T] {
        guard let count = Int(exactly: try unsigned()), count <= buffer.count - offset else {
            throw QuoteCodec.CorruptRecord(description: "stored list is truncated")
        }
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try read(&self)) }
        return values
    }

    mutating func skill() throws -> Skill {
        guard let skill = Skill(rawValue: Int(try byte())) else {
            throw QuoteCodec.CorruptRecord(description: "stored skill is unknown")
        }
        return skill
    }

    mutating func money() throws -> Money {
        let cents = try int()
        return Money(cents: cents, currency: Currency(try string()))
    }

    mutating func service() throws -> Service {
        Service(name: try string(), minimumSkill: try skill(), price: try money())
    }

    mutating func mechanic() throws -> Mechanic {
        Mechanic(id: MechanicID(try int()), name: try string(), skill: try skill())
    }

    mutating func customer() throws -> Customer {
        Customer(name: try string(), email: try string(), address: try string())
    }

    mutating func lines() throws -> [LineItem] {
        try array { reader in LineItem(service: try reader.string(), price: try reader.money()) }
    }

    mutating func pricing() throws -> Pricing {
        Pricing(
            lines: try lines(), subtotal: try money(), coupon: try optional { try $0.string() }, discount: try money(),
            total: try money(), isManual: try bool())
    }

    mutating func assignment() throws -> Assignment {
        Assignment(mechanic: try mechanic(), bookedAt: try date())
    }

    mutating func quote() throws -> Quote {
        let id = QuoteID(try int())
        let customer = try customer()
        let car = Car(
            make: try string(), model: try string(), year: try optional { Int(try $0.int()) },
            trim: try optional { try $0.string() })
        let services = try array { reader in
            RequestedService(name: try reader.string(), listed: try reader.optional { try $0.service() })
        }
        let preferred = try optional { try $0.mechanic() }
        let coupon = try optional { reader -> Coupon in
            let code = try reader.string()
            let discount: Coupon.Discount =
                try reader.byte() == 0 ? .percent(Int(try reader.int())) : .amount(try reader.money())
            return Coupon(code: code, discount: discount, expiresAt: try reader.optional { try $0.date() })
        }
        let request = QuoteRequest(
            customer: customer, car: car, services: services, preferredMechanic: preferred, coupon: coupon)
        let stage: QuoteStage
        switch try byte() {
        case 0: stage = .submitted
        case 1:
            stage = .pending(
                reasons: try array { reader in
                    PendingReason(code: try reader.string(), field: try reader.string(), message: try reader.string())
                })
        case 2: stage = .ready(pricing: try pricing())
        case 3: stage = .booked(pricing: try pricing(), assignment: try assignment())
        case 4:
            let pricing = try pricing()
            let assignment = try assignment()
            let receiptPricing = Pricing(
                lines: try lines(), subtotal: try money(), coupon: try optional { try $0.string() },
                discount: try money(),
                total: try money(), isManual: pricing.isManual)
            let receipt = Receipt(
                pricing: receiptPricing, mechanic: try mechanic(), customer: try self.customer(),
                completedAt: try date())
            stage = .completed(pricing: pricing, assignment: assignment, receipt: receipt)
        case 5:
            let index = Int(try byte())
            guard index < QuoteStatus.allCases.count else {
                throw QuoteCodec.CorruptRecord(description: "stored state is unknown")
            }
            stage = .cancelled(from: QuoteStatus.allCases[index], reason: try optional { try $0.string() })
        case 6:
            stage = .waiting(pricing: try pricing(), since: try date(), mechanic: try optional { try $0.mechanic() })
        default:
            throw QuoteCodec.CorruptRecord(description: "stored stage is unknown")
        }
        let submittedAt = try date()
        let updatedAt = try date()
        let submittedBy = offset < buffer.count ? try optional { try $0.string() } : nil
        let digest = offset < buffer.count ? try optional { try $0.unsigned() } : nil
        let notice = offset < buffer.count ? try optional { try $0.string() } : nil
        return Quote(
            id: id, request: request, stage: stage, submittedAt: submittedAt, updatedAt: updatedAt,
            submittedBy: submittedBy, submissionDigest: digest.map(SubmissionDigest.init(rawValue:)), notice: notice)
    }
}
