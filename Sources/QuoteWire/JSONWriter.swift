import Foundation
import QuoteCore

/// Writes JSON straight into a byte buffer. Replies and events go out through this, not
/// `JSONEncoder`: on this machine Foundation's encoder manages a few tens of thousands of
/// nested quotes a second, a fraction of what one I/O thread must publish.
///
/// The bytes go into a buffer of its own (`Output`), not an `Array`: every `append` to an
/// array checks that its storage is unique and has room, and `append(contentsOf:)` goes
/// through a generic path, and on this path those checks cost more than the bytes. The
/// writer and its buffer are noncopyable structs, not a class,
/// so that no access pays for a runtime exclusivity check. Which containers need a comma
/// before their next value is a bit per nesting level, not an array of flags.
struct JSONWriter: ~Copyable {
    private var output: Output
    /// Bit `n` set: the container at depth `n` has a value, so the next one needs a comma.
    private var commas: UInt64 = 0
    private var depth = 0

    /// The last date written on this thread, shared by the writers of one ``WireCodec``.
    private let dates: DateCache?

    init(capacity: Int = 1_024, dates: DateCache? = nil) {
        output = Output(capacity: capacity)
        self.dates = dates
    }

    /// What has been written.
    var bytes: [UInt8] { output.array }

    /// How many bytes have been written.
    var position: Int { output.count }

    /// Appends bytes written before by the same kind of writer, as they are: no separator.
    mutating func splice(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { output.append($0) }
    }

    mutating func beginObject() {
        separator()
        output.append(UInt8(ascii: "{"))
        push()
    }

    mutating func endObject() {
        output.append(UInt8(ascii: "}"))
        depth -= 1
    }

    mutating func beginArray() {
        separator()
        output.append(UInt8(ascii: "["))
        push()
    }

    mutating func endArray() {
        output.append(UInt8(ascii: "]"))
        depth -= 1
    }

    private mutating func push() {
        precondition(depth < 63, "JSON nested deeper than 63 levels")
        depth += 1
        noCommaBeforeNext()
    }

    /// Writes `"name":` inside an object.
    mutating func key(_ name: StaticString) {
        // Keys are the writer's most frequent call: one room check and one pass, not four
        // appends.
        let bit: UInt64 = 1 << UInt64(depth)
        output.appendKey(name, comma: commas & bit != 0)
        // Its value takes no comma; the value sets the bit again for the next key.
        commas &= ~bit
    }

    /// Writes a dynamic key, escaped.
    mutating func key(dynamic name: String) {
        string(name)
        output.append(UInt8(ascii: ":"))
        noCommaBeforeNext()
    }

    /// The next value in the current container takes no comma: it is the container's first,
    /// or it follows its key.
    private mutating func noCommaBeforeNext() {
        commas &= ~(1 << UInt64(depth))
    }

    mutating func string(_ value: String) {
        separator()
        output.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Most text needs no escaping: copy it whole, and only byte by byte when it does.
            guard Self.needsEscaping(utf8) else {
                output.append(UnsafeRawBufferPointer(utf8))
                return
            }
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(92, byte)
                case 0x0A: output.append(92, UInt8(ascii: "n"))
                case 0x0D: output.append(92, UInt8(ascii: "r"))
                case 0x09: output.append(92, UInt8(ascii: "t"))
                case 0..<0x20:
                    output.append(92, UInt8(ascii: "u"))
                    output.append(48, 48)
                    output.append(Self.hexDigit(byte >> 4), Self.hexDigit(byte & 0xF))
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Whether `bytes` hold a quote, a backslash or a control character, tested a word at a
    /// time (the "has zero byte" and "has byte less than" tests): text is scanned in every
    /// string of every quote, so it reads words, not bytes.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var index = 0
        while index &+ 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let quotes = word ^ (ones &* 0x22)
            let backslashes = word ^ (ones &* 0x5C)
            let hits =
                ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes) | ((word &- ones &* 0x20) & ~word)
            if hits & highBits != 0 { return true }
            index &+= 8
        }
        while index < bytes.count {
            let byte = base[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index &+= 1
        }
        return false
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? 48 + value : UInt8(ascii: "a") + value - 10
    }

    /// Writes the decimal digits of `value`, without going through a `String`.
    mutating func int(_ value: Int64) {
        separator()
        if value < 0 { output.append(UInt8(ascii: "-")) }
        output.appendDigits(value.magnitude)
    }

    mutating func bool(_ value: Bool) {
        separator()
        output.append(value ? "true" : "false")
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
        if let text = dates?.text(milliseconds) {
            separator()
            output.append(text)
            return
        }
        let (days, millisecondOfDay) = Self.floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = Self.civil(fromDays: days)
        guard (0...9_999).contains(year) else {
            string(value.formatted(WireCodec.timeFormat))
            return
        }
        separator()
        let start = output.count
        defer { dates?.remember(milliseconds, output.bytes(from: start)) }
        output.append(UInt8(ascii: "\""))
        output.appendFixed(UInt64(year), width: 4)
        output.append(UInt8(ascii: "-"))
        output.appendFixed(UInt64(month), width: 2)
        output.append(UInt8(ascii: "-"))
        output.appendFixed(UInt64(day), width: 2)
        output.append(UInt8(ascii: "T"))
        output.appendFixed(UInt64(millisecondOfDay / 3_600_000), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendFixed(UInt64(millisecondOfDay / 60_000 % 60), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendFixed(UInt64(millisecondOfDay / 1_000 % 60), width: 2)
        output.append(UInt8(ascii: "."))
        output.appendFixed(UInt64(millisecondOfDay % 1_000), width: 3)
        output.append(UInt8(ascii: "Z"), UInt8(ascii: "\""))
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

    /// Before a value: a comma if its container already has one (none at the top level).
    @inline(__always) private mutating func separator() {
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth)
        if commas & bit != 0 { output.append(UInt8(ascii: ",")) }
        commas |= bit
    }
}

/// The last date a codec's writers wrote, as its JSON: every quote and event of a batch
/// carries the batch's time, so a date is formatted once per batch rather than once per
/// quote. Not thread-safe: one per ``WireCodec``, one codec per thread.
final class DateCache {
    /// The milliseconds, then the text's length and bytes (a date's JSON is 26 bytes, or a
    /// few more for years beyond four digits, which are not cached). Raw memory rather than
    /// stored `var`s, which would pay a runtime exclusivity check on every access.
    private let storage = UnsafeMutableRawPointer.allocate(byteCount: 48, alignment: 8)
    private static let capacity = 39

    init() { storage.storeBytes(of: Int64.min, as: Int64.self) }

    deinit { storage.deallocate() }

    /// The text of `milliseconds`, if it is the last date remembered.
    func text(_ milliseconds: Int64) -> UnsafeRawBufferPointer? {
        guard storage.load(as: Int64.self) == milliseconds else { return nil }
        return UnsafeRawBufferPointer(start: storage + 9, count: Int(storage.load(fromByteOffset: 8, as: UInt8.self)))
    }

    func remember(_ milliseconds: Int64, _ text: UnsafeRawBufferPointer) {
        guard text.count <= Self.capacity, let source = text.baseAddress else { return }
        storage.storeBytes(of: milliseconds, as: Int64.self)
        storage.storeBytes(of: UInt8(text.count), toByteOffset: 8, as: UInt8.self)
        (storage + 9).copyMemory(from: source, byteCount: text.count)
    }
}

/// The writer's bytes: one allocation, grown by doubling, written through a pointer.
private struct Output: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The bytes from `start` on, valid until the next write.
    func bytes(from start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: count - start)
    }

    @inline(__always) private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        reserve(length)
        if let source = bytes.baseAddress { Self.copy(source, to: base + count, count: length) }
        count += length
    }

    /// Copies `length` bytes. Up to 16 (keys, numbers, short names), in two overlapping
    /// unaligned words: a call to memcpy, or a loop a byte at a time, costs more than the
    /// bytes.
    @inline(__always) private static func copy(
        _ source: UnsafeRawPointer, to target: UnsafeMutablePointer<UInt8>, count length: Int
    ) {
        let target = UnsafeMutableRawPointer(target)
        if length > 16 {
            target.copyMemory(from: source, byteCount: length)
        } else if length >= 8 {
            let tail = length &- 8
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            target.storeBytes(
                of: source.loadUnaligned(fromByteOffset: tail, as: UInt64.self), toByteOffset: tail, as: UInt64.self)
        } else if length >= 4 {
            let tail = length &- 4
            target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
            target.storeBytes(
                of: source.loadUnaligned(fromByteOffset: tail, as: UInt32.self), toByteOffset: tail, as: UInt32.self)
        } else {
            for index in 0..<length {
                target.storeBytes(
                    of: source.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index, as: UInt8.self)
            }
        }
    }

    @inline(__always) mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `,"name":` (without the comma when `comma` is false), checking for room once.
    @inline(__always) mutating func appendKey(_ name: StaticString, comma: Bool) {
        let length = name.utf8CodeUnitCount
        reserve(length + 4)
        var index = count
        if comma {
            base[index] = UInt8(ascii: ",")
            index += 1
        }
        base[index] = UInt8(ascii: "\"")
        index += 1
        Self.copy(name.utf8Start, to: base + index, count: length)
        index += length
        base[index] = UInt8(ascii: "\"")
        base[index + 1] = UInt8(ascii: ":")
        count = index + 2
    }

    /// `value` in decimal, most significant digit first.
    mutating func appendDigits(_ value: UInt64) {
        reserve(20)
        var remaining = value
        var end = count
        repeat {
            base[end] = 48 + UInt8(remaining % 10)
            remaining /= 10
            end += 1
        } while remaining > 0
        // Written least significant first: turn them around in place.
        var (low, high) = (count, end - 1)
        while low < high {
            (base[low], base[high]) = (base[high], base[low])
            low += 1
            high -= 1
        }
        count = end
    }

    /// The last `width` decimal digits of `value`, zero-padded.
    @inline(__always) mutating func appendFixed(_ value: UInt64, width: Int) {
        reserve(width)
        var remaining = value
        var index = count + width - 1
        while index >= count {
            base[index] = 48 + UInt8(remaining % 10)
            remaining /= 10
            index -= 1
        }
        count += width
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
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
        for value in values {
            line(name: value.name, priceCents: value.priceCents)
        }
        endArray()
    }

    /// A service line of a quote or a receipt.
    mutating func line(name: String, priceCents: Int64?) {
        beginObject()
        field("name", name)
        field("priceCents", priceCents)
        endObject()
    }

    mutating func mechanic(_ value: WireQuote.WireMechanic) {
        mechanic(id: value.id, name: value.name, skill: value.skill)
    }

    mutating func mechanic(id: Int64, name: String, skill: String) {
        beginObject()
        field("id", id)
        field("name", name)
        field("skill", skill)
        endObject()
    }

    mutating func pendingReasons(_ reasons: [PendingReason]) {
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
            pendingReasons(reasons)
        }
        field("cancelledFrom", value.cancelledFrom)
        if let mechanic = value.waitingFor {
            key("waitingFor")
            self.mechanic(mechanic)
        }
        field("waitingSince", value.waitingSince)
        field("submittedAt", value.submittedAt)
        field("updatedAt", value.updatedAt)
        field("submittedBy", value.submittedBy)
        endObject()
    }

    /// Writes a value already encoded as JSON, such as a quote shared by a reply and an event.
    mutating func raw(_ json: [UInt8]) {
        separator()
        json.withUnsafeBytes { output.append($0) }
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
        field("by", value.by)
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
            case .outOfRange(let digits): raw(Array(digits.utf8))
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
        field("waitPosition", value.waitPosition)
        if let quotes = value.quotes {
            key("quotes")
            beginArray()
            for quote in quotes { self.quote(quote) }
            endArray()
        }
        field("next", value.next)
        field("truncated", value.truncated)
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
        field("store", value.store)
        field("storeError", value.storeError)
        field("oldestWaitMilliseconds", value.oldestWaitMilliseconds)
        if let counts = value.mechanicCounts {
            key("mechanicCounts")
            counters(counts.mapValues(Int64.init))
        }
        if let activity = value.activity {
            key("activity")
            self.activity(activity)
        }
        endObject()
    }

    /// `{"name":count,...}`, by name.
    private mutating func counters(_ counts: [String: Int64]) {
        beginObject()
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) {
            key(dynamic: name)
            int(count)
        }
        endObject()
    }

    private mutating func integers(_ values: [Int64]) {
        beginArray()
        for value in values { int(value) }
        endArray()
    }

    private mutating func activity(_ value: WireReply.Activity) {
        beginObject()
        field("startedAt", value.startedAt)
        field("uptimeMilliseconds", value.uptimeMilliseconds)
        key("requests")
        beginObject()
        for (op, codes) in value.requests.sorted(by: { $0.key < $1.key }) {
            key(dynamic: op)
            counters(codes)
        }
        endObject()
        key("latencyBoundsMicroseconds")
        integers(value.latencyBoundsMicroseconds)
        key("latency")
        beginObject()
        for (op, buckets) in value.latency.sorted(by: { $0.key < $1.key }) {
            key(dynamic: op)
            integers(buckets)
        }
        endObject()
        field("eventsPublished", value.eventsPublished)
        field("batches", value.batches)
        field("storeErrors", value.storeErrors)
        endObject()
    }
}
