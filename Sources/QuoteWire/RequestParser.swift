import Foundation
import QuoteCore

/// Reads a request frame straight into a ``WireRequest``: one pass over the bytes, strict
/// JSON (RFC 8259), no intermediate tree and no `Decoder` machinery.
///
/// Foundation's `JSONDecoder` costs several times more per frame, on the daemon's busiest
/// thread (`quoted-bench codec` compares the two). It answers as the `Codable` path does: bytes
/// that are not JSON are `invalid_json` (checked over the whole frame first, unknown keys
/// included); then the first field of the wrong type is `invalid_request` naming its path;
/// `null` stands for an absent optional field; the keys present are recorded for
/// ``WireRequest/action(currency:)`` to check against the operation; a known key given twice
/// is refused; whole numbers are integers however they are written (`3.0`, `3e0`).
/// `WireCodecTests` compares the two on valid and broken frames.
struct RequestParser {
    /// Why a frame was refused.
    private enum Failure: Error {
        /// Not JSON at all.
        case syntax
    }

    /// Nesting deeper than this is refused as not JSON rather than risk the stack.
    static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// The first field of the wrong type; reported only if the whole frame is valid JSON.
    private var fieldError: WireError?
    /// Whether every string read so far was printable ASCII without escapes: then the text
    /// checks after the parse need only look at lengths.
    private var allPlain = true
    /// The first key of `customer` or `car` that the protocol does not have.
    private var unknownNested: String?

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Parses `frame` as a request.
    static func parse(_ frame: [UInt8]) -> Result<WireRequest, WireError> {
        parseKeepingID(frame).result
    }

    /// Parses `frame` as a request; a refusal comes with the request's `id` when the frame
    /// is a JSON object whose `id` is a string or a 64-bit integer, so that the reply can
    /// carry it whatever else is wrong.
    static func parseKeepingID(_ frame: [UInt8]) -> (result: Result<WireRequest, WireError>, id: RequestID?) {
        var request = WireRequest()
        let (refusal, id) = parse(frame, into: &request)
        return (refusal.map { .failure($0) } ?? .success(request), id)
    }

    /// Parses `frame` into `request`, which starts empty, and says why it is refused, if it
    /// is, with the request's `id` as ``parseKeepingID(_:)`` keeps it. Filled in place rather
    /// than returned: a copy of a request's two dozen fields retains and releases each of its
    /// strings, and this runs for every request.
    static func parse(_ frame: [UInt8], into request: inout WireRequest) -> (refusal: WireError?, id: RequestID?) {
        // The request is read outside the closure: a method called on it through the
        // closure's capture would be called on a copy.
        let parsed = frame.withUnsafeBufferPointer {
            buffer -> (fieldError: WireError?, allPlain: Bool, unknownNested: String?)? in
            var parser = RequestParser(buffer)
            do {
                try parser.request(into: &request)
            } catch {
                return nil
            }
            return (parser.fieldError, parser.allPlain, parser.unknownNested)
        }
        guard let parsed else { return (WireError(code: .invalidJSON, message: "the request is not valid JSON"), nil) }
        if request.presence.unknown == nil { request.presence.unknown = parsed.unknownNested }
        if let error = parsed.fieldError ?? request.textError(knownPlain: parsed.allPlain) {
            // An id that would itself be refused is not echoed.
            return (error, WireRequest.isEchoable(request.id) ? request.id : nil)
        }
        return (nil, request.id)
    }

    // MARK: The request

    private mutating func request(into request: inout WireRequest) throws(Failure) {
        skipSpace()
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 0)
            try end()
            fieldError = WireError(code: .invalidRequest, message: "the request must be a JSON object")
            return
        }
        try object(depth: 0) { parser, key throws(Failure) in
            // The key is matched once, to its field's bit; the value is read by the bit.
            let field = WireRequest.Fields(key: key)
            if let field {
                // A repeated key is refused: readers disagree on which copy counts.
                if !request.presence.fields.insert(field).inserted {
                    parser.refuse(key.text, "is given more than once")
                }
            } else {
                // Of several, the first in byte order (as the `JSONDecoder` path reports too).
                let text = key.text
                if request.presence.unknown.map({ WireRequest.precedes(text, $0) }) ?? true {
                    request.presence.unknown = text
                }
            }
            switch field ?? [] {
            case .v: try parser.first(&request.v, depth: 1) { try $0.int("v") }
            case .op: try parser.first(&request.op, depth: 1) { try $0.operationName() }
            case .id: try parser.first(&request.id, depth: 1) { try $0.requestID() }
            case .customer:
                // `submit`'s customer is an object; `list`'s a search text.
                if parser.peekValue() == UInt8(ascii: "\"") {
                    try parser.first(&request.customerSearch, depth: 1) { try $0.string("customer") }
                } else {
                    try parser.first(&request.customer, depth: 1) { try $0.customer() }
                }
            case .car: try parser.first(&request.car, depth: 1) { try $0.car() }
            case .services: try parser.first(&request.services, depth: 1) { try $0.strings("services") }
            case .idempotencyKey:
                try parser.first(&request.idempotencyKey, depth: 1) { try $0.string("idempotencyKey") }
            case .mechanic: try parser.first(&request.mechanic, depth: 1) { try $0.string("mechanic") }
            case .coupon: try parser.first(&request.coupon, depth: 1) { try $0.string("coupon") }
            case .book: try parser.first(&request.book, depth: 1) { try $0.bool("book") }
            case .wait: try parser.first(&request.wait, depth: 1) { try $0.bool("wait") }
            case .quoteId: try parser.first(&request.quoteId, depth: 1) { try $0.int64("quoteId") }
            case .state: try parser.first(&request.state, depth: 1) { try $0.string("state") }
            case .after: try parser.first(&request.after, depth: 1) { try $0.int64("after") }
            case .limit: try parser.first(&request.limit, depth: 1) { try $0.int("limit") }
            case .year: try parser.first(&request.year, depth: 1) { try $0.int("year") }
            case .trim: try parser.first(&request.trim, depth: 1) { try $0.string("trim") }
            case .make: try parser.first(&request.make, depth: 1) { try $0.string("make") }
            case .model: try parser.first(&request.model, depth: 1) { try $0.string("model") }
            case .price: try parser.first(&request.price, depth: 1) { try $0.string("price") }
            case .priceCents: try parser.first(&request.priceCents, depth: 1) { try $0.int64("priceCents") }
            case .reason: try parser.first(&request.reason, depth: 1) { try $0.string("reason") }
            case .since: try parser.first(&request.since, depth: 1) { try $0.int64("since") }
            case .free: try parser.first(&request.free, depth: 1) { try $0.bool("free") }
            case .skill: try parser.first(&request.skill, depth: 1) { try $0.string("skill") }
            case .onDuty: try parser.first(&request.onDuty, depth: 1) { try $0.bool("onDuty") }
            case .name: try parser.first(&request.name, depth: 1) { try $0.string("name") }
            case .catalog: try parser.first(&request.catalogJSON, depth: 1) { try $0.catalog() }
            default: try parser.skipValue(depth: 1)
            }
        }
        try end()
    }

    /// A catalog document (`applyCatalog`): the bytes of its object, once they are known to
    /// be JSON; read only when the caller may apply it (``WireRequest/action(currency:)``).
    private mutating func catalog() throws(Failure) -> [UInt8]? {
        try typed("catalog", "a catalog object", startingWith: "{") { parser throws(Failure) in
            let start = parser.index
            try parser.skipValue(depth: 1)
            return Array(parser.bytes[start..<parser.index])
        }
    }

    private mutating func customer() throws(Failure) -> Submission.CustomerInput? {
        try typed("customer", "an object", startingWith: "{") { parser throws(Failure) in try parser.customerObject() }
    }

    private static let customerKeys: [StaticString] = ["name", "email", "address"]
    private static let carKeys: [StaticString] = ["make", "model", "year", "trim"]

    private mutating func customerObject() throws(Failure) -> Submission.CustomerInput {
        var customer = Submission.CustomerInput()
        try members("customer", into: &customer, Self.customerKeys) {
            parser, index, customer throws(Failure) in
            switch index {
            case 0: try parser.first(&customer.name, depth: 2) { try $0.string("customer.name") }
            case 1: try parser.first(&customer.email, depth: 2) { try $0.string("customer.email") }
            default: try parser.first(&customer.address, depth: 2) { try $0.string("customer.address") }
            }
        }
        return customer
    }

    private mutating func car() throws(Failure) -> Submission.CarInput? {
        try typed("car", "an object", startingWith: "{") { parser throws(Failure) in try parser.carObject() }
    }

    private mutating func carObject() throws(Failure) -> Submission.CarInput {
        var car = Submission.CarInput()
        try members("car", into: &car, Self.carKeys) {
            parser, index, car throws(Failure) in
            switch index {
            case 0: try parser.first(&car.make, depth: 2) { try $0.string("car.make") }
            case 1: try parser.first(&car.model, depth: 2) { try $0.string("car.model") }
            case 2: try parser.first(&car.year, depth: 2) { try $0.int("car.year") }
            default: try parser.first(&car.trim, depth: 2) { try $0.string("car.trim") }
            }
        }
        return car
    }

    /// Reads the object `path` (`customer`, `car`) into `value`: `read` gets each member by its
    /// index in `keys`; a key given twice is refused, and the first unknown one (in byte order)
    /// is remembered for the operation's check. Filled in place: a value returned from here
    /// would be copied out of the closure's capture, each of its strings retained.
    private mutating func members<Value>(
        _ path: String, into value: inout Value, _ keys: [StaticString],
        _ read: (inout RequestParser, Int, inout Value) throws(Failure) -> Void
    ) throws(Failure) {
        var seen: UInt8 = 0
        try object(depth: 1) { parser, key throws(Failure) in
            guard let index = keys.firstIndex(where: { $0 ~= key }) else {
                let name = path + "." + key.text
                if parser.unknownNested.map({ WireRequest.precedes(name, $0) }) ?? true { parser.unknownNested = name }
                return try parser.skipValue(depth: 2)
            }
            let bit: UInt8 = 1 << UInt8(index)
            if seen & bit != 0 { parser.refuse(path + "." + key.text, "is given more than once") }
            seen |= bit
            try read(&parser, index, &value)
        }
    }

    /// Reads a key's value into `slot`, unless an earlier copy of the key already set it: the
    /// first counts, as with `JSONDecoder`; a repeat is only checked for syntax. (`read`
    /// throws untyped so call sites can stay one-line closures; only `Failure` comes out.)
    private mutating func first<T>(
        _ slot: inout T?, depth: Int, _ read: (inout RequestParser) throws -> T?
    ) throws(Failure) {
        guard slot == nil else { return try skipValue(depth: depth) }
        do {
            slot = try read(&self)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .syntax
        }
    }

    /// A string or an integer, echoed as it came.
    private mutating func requestID() throws(Failure) -> RequestID? {
        try typed("id", "a string or an integer", startingWith: "\"-0123456789") { parser throws(Failure) in
            if parser.peek() == UInt8(ascii: "\"") { return .string(try parser.stringLiteral()) }
            switch try parser.integer() {
            case .value(let number): return .number(number)
            case .fractional: return nil
            case .outOfRange(let digits):
                parser.refuse("id", "must be a string or an integer within 64 bits")
                // Echoed in plain digits, so that the refusal still finds its request.
                return digits.map(RequestID.outOfRange)
            }
        }
    }

    // MARK: Typed fields

    /// A field's value: `nil` for `null`; read by `read` when the next byte can start one
    /// (`read` returns `nil` for a value of the right kind that still does not fit, such as
    /// 1.5 for an integer); anything else is stepped over and recorded as the wrong type.
    private mutating func typed<T>(
        _ field: @autoclosure () -> String, _ expected: String, startingWith starts: StaticString,
        _ read: (inout RequestParser) throws(Failure) -> T?
    ) throws(Failure) -> T? {
        skipSpace()
        let first = peek()
        if first == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        if starts.withUTF8Buffer({ $0.contains(first) }) {
            if let value = try read(&self) { return value }
        } else {
            try skipValue(depth: 1)
        }
        mismatch(field(), expected)
        return nil
    }

    private mutating func string(_ field: @autoclosure () -> String) throws(Failure) -> String? {
        try typed(field(), "a string", startingWith: "\"") { parser throws(Failure) in
            try parser.stringLiteral()
        }
    }

    /// The `op` string: the name's own constant (`Operation.rawValue`) when it is one the
    /// protocol knows, spelled plainly, rather than a string made from the bytes.
    private mutating func operationName() throws(Failure) -> String? {
        try typed("op", "a string", startingWith: "\"") { parser throws(Failure) in
            let start = parser.index + 1
            let end = Self.endOfPlainText(parser.bytes, from: start)
            if end < parser.bytes.count, parser.bytes[end] == UInt8(ascii: "\""),
                let known = Operation(utf8: UnsafeBufferPointer(rebasing: parser.bytes[start..<end]))
            {
                parser.index = end + 1
                return known.rawValue
            }
            return try parser.stringLiteral()
        }
    }

    private mutating func refuse(_ field: String, _ message: String) {
        guard fieldError == nil else { return }
        fieldError = WireError(
            code: .invalidRequest, message: "\(field) \(message)", problems: [.init(field: field, message: message)])
    }

    private mutating func bool(_ field: String) throws(Failure) -> Bool? {
        try typed(field, "true or false", startingWith: "tf") {
            parser throws(Failure) in
            let value = parser.peek() == UInt8(ascii: "t")
            try parser.literal(value ? "true" : "false")
            return value
        }
    }

    private mutating func int64(_ field: String) throws(Failure) -> Int64? {
        try typed(field, "an integer", startingWith: "-0123456789") { parser throws(Failure) in
            switch try parser.integer() {
            case .value(let number): return number
            case .fractional: return nil
            case .outOfRange:
                parser.refuse(field, "must be from \(Int64.min) to \(Int64.max)")
                return nil
            }
        }
    }

    private mutating func int(_ field: String) throws(Failure) -> Int? {
        try int64(field).map { Int($0) }
    }

    /// An array of strings; a `null` or other value in it is recorded against its index.
    private mutating func strings(_ field: String) throws(Failure) -> [String]? {
        try typed(field, "an array", startingWith: "[") { parser throws(Failure) in
            try parser.stringArray(field)
        }
    }

    private mutating func stringArray(_ field: String) throws(Failure) -> [String] {
        index += 1
        var values: [String] = []
        skipSpace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return values
        }
        // Room for a usual list at once, rather than growing it one, two, then four.
        values.reserveCapacity(4)
        var count = 0
        while true {
            skipSpace()
            count += 1
            switch peek() {
            case UInt8(ascii: "\"") where count > QuoteLimits.maximumServices:
                // Past the limit: checked as JSON, never kept.
                try skipValue(depth: 2)
                if count == QuoteLimits.maximumServices + 1 { refuse(field, WireRequest.tooManyItems) }
            case UInt8(ascii: "\""): values.append(try stringLiteral())
            case UInt8(ascii: "n"):
                try literal("null")
                if fieldError == nil {
                    fieldError = WireError(
                        code: .invalidRequest, message: "\(field)[\(values.count)] is null",
                        problems: [.init(field: "\(field)[\(values.count)]", message: "must be a string, not null")])
                }
            default:
                try skipValue(depth: 2)
                mismatch("\(field)[\(values.count)]", "a string")
            }
            skipSpace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "]"): return values
            default: throw .syntax
            }
        }
    }

    /// Records that `field` holds the wrong type, if nothing was recorded before: the field's
    /// name is made only then (a list of a thousand numbers names one element, not each).
    private mutating func mismatch(_ field: @autoclosure () -> String, _ expected: String) {
        guard fieldError == nil else { return }
        let field = field()
        fieldError = WireError(
            code: .invalidRequest, message: "\(field) has the wrong type",
            problems: [.init(field: field, message: "must be \(expected)")])
    }

    // MARK: JSON

    /// Reads an object, calling `member` with each key once the cursor is on its value.
    private mutating func object(
        depth: Int, _ member: (inout RequestParser, Key) throws(Failure) -> Void
    ) throws(Failure) {
        guard depth < Self.maximumDepth else { throw .syntax }
        skipSpace()
        guard next() == UInt8(ascii: "{") else { throw .syntax }
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw .syntax }
            let key = try keyLiteral()
            skipSpace()
            guard next() == UInt8(ascii: ":") else { throw .syntax }
            try member(&self, key)
            skipSpace()
            switch next() {
            case UInt8(ascii: ","): continue
            case UInt8(ascii: "}"): return
            default: throw .syntax
            }
        }
    }

    /// Checks any value's syntax and steps over it.
    private mutating func skipValue(depth: Int) throws(Failure) {
        guard depth < Self.maximumDepth else { throw .syntax }
        skipSpace()
        switch peek() {
        case UInt8(ascii: "{"):
            try object(depth: depth) { parser, _ throws(Failure) in try parser.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            index += 1
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                skipSpace()
                switch next() {
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): return
                default: throw .syntax
                }
            }
        case UInt8(ascii: "\""): _ = try stringLiteral()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw .syntax
        }
    }

    /// Only whitespace may follow the request.
    private mutating func end() throws(Failure) {
        skipSpace()
        guard index == bytes.count else { throw .syntax }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw .syntax }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw .syntax }
        index += count
    }

    /// A number's syntax, stepped over; whether it was a plain integer (no fraction or
    /// exponent) and where its digits are.
    private mutating func number() throws(Failure) -> (isInteger: Bool, range: Range<Int>) {
        let start = index
        var isInteger = true
        if peek() == UInt8(ascii: "-") { index += 1 }
        let first = peek()
        guard Self.isDigit(first) else { throw .syntax }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard Self.isDigit(peek()) else { throw .syntax }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard Self.isDigit(peek()) else { throw .syntax }
            skipDigits()
        }
        return (isInteger, start..<index)
    }

    /// What a JSON number is, as an integer field sees it.
    enum Integer: Equatable {
        /// A whole number within 64 bits, however it was written (`100`, `1.0e2`).
        case value(Int64)
        /// A whole number beyond 64 bits: its decimal digits when they are at most
        /// `QuoteLimits.maximumTextLength` long (to echo it), else `nil`.
        case outOfRange(String?)
        /// A number with a fractional part.
        case fractional
    }

    /// A number read as an integer: whole numbers count whatever their notation, as in JSON
    /// Schema (`1.0` and `1e2` are integers). Linear in the number's length, exponent included.
    private mutating func integer() throws(Failure) -> Integer {
        let (isInteger, range) = try number()
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        // Plain digits, as integers are written in practice: at most eighteen fit in 64 bits
        // whatever they are.
        if isInteger && range.upperBound &- position <= 18 {
            var value: Int64 = 0
            while position < range.upperBound {
                value = value &* 10 &+ Int64(bytes[position] &- UInt8(ascii: "0"))
                position &+= 1
            }
            return .value(negative ? 0 &- value : value)
        }
        // The significant digits, integer part then fraction, and where the fraction starts.
        let digitsStart = position
        while position < range.upperBound, Self.isDigit(bytes[position]) { position += 1 }
        let integerEnd = position
        var fractionEnd = position
        if position < range.upperBound, bytes[position] == UInt8(ascii: ".") {
            position += 1
            while position < range.upperBound, Self.isDigit(bytes[position]) { position += 1 }
            fractionEnd = position
        }
        // The exponent, saturated beyond any frame's length: past that it can only mean out of
        // range or zero, whatever the digits.
        var exponent = 0
        if position < range.upperBound {
            position += 1
            var exponentNegative = false
            if bytes[position] == UInt8(ascii: "-") || bytes[position] == UInt8(ascii: "+") {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            while position < range.upperBound {
                exponent = min(exponent * 10 + Int(bytes[position] &- UInt8(ascii: "0")), 1 << 40)
                position += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        // value = digits × 10^(exponent − fraction digits); trailing zeros move into the power.
        func digit(_ offset: Int) -> UInt8 {
            let at = offset < integerEnd ? offset : offset + 1
            return bytes[at] &- UInt8(ascii: "0")
        }
        let fractionDigits = fractionEnd > integerEnd ? fractionEnd - integerEnd - 1 : 0
        var first = digitsStart
        var last = integerEnd - digitsStart + fractionDigits + digitsStart
        while first < last, digit(first) == 0 { first += 1 }
        while last > first, digit(last - 1) == 0 { last -= 1 }
        if first == last { return .value(0) }
        let trailingZeros = (integerEnd - digitsStart + fractionDigits + digitsStart) - last
        let power = exponent - fractionDigits + trailingZeros
        guard power >= 0 else { return .fractional }
        /// The value's plain decimal digits, for an id to echo: bounded, whatever the exponent.
        func digits() -> String? {
            guard power <= QuoteLimits.maximumTextLength, last - first + power < QuoteLimits.maximumTextLength else {
                return nil
            }
            var text = negative ? "-" : ""
            for offset in first..<last { text.unicodeScalars.append(Unicode.Scalar(digit(offset) + 48)) }
            return text + String(repeating: "0", count: power)
        }
        guard last - first + power <= 19 else { return .outOfRange(digits()) }
        var value: Int64 = 0
        for offset in first..<last {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let next = Int64(digit(offset))
            let (added, overflow2) =
                negative ? shifted.subtractingReportingOverflow(next) : shifted.addingReportingOverflow(next)
            guard !overflow1, !overflow2 else { return .outOfRange(digits()) }
            value = added
        }
        for _ in 0..<power {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return .outOfRange(digits()) }
            value = shifted
        }
        return .value(value)
    }

    /// An object's key, matched against the keys the protocol knows without making a
    /// `String` of it: its bytes in the frame when it is plain ASCII without escapes (every
    /// key a client sends in practice), else its decoded text.
    struct Key {
        fileprivate let raw: UnsafeBufferPointer<UInt8>?
        fileprivate let decoded: String?

        // Inlined into each key switch: one call per case tried costs more than the compare.
        @inline(__always)
        static func ~= (pattern: StaticString, key: Key) -> Bool {
            let length = pattern.utf8CodeUnitCount
            let expected = pattern.utf8Start
            if let raw = key.raw {
                guard raw.count == length else { return false }
                for index in 0..<length where raw[index] != expected[index] { return false }
                return true
            }
            return key.decoded.map { $0.utf8.elementsEqual(UnsafeBufferPointer(start: expected, count: length)) }
                ?? false
        }

        /// The key's length in bytes.
        var length: Int { raw?.count ?? decoded?.utf8.count ?? 0 }

        /// The key's first sixteen bytes as two little-endian words, zero past its end: two
        /// keys as long and no longer than sixteen bytes are equal when their words are.
        var words: (UInt64, UInt64) {
            if let raw { return Self.words(raw) }
            guard let decoded else { return (0, 0) }
            var text = decoded
            return text.withUTF8 { Self.words($0) }
        }

        /// `bytes`' first sixteen as ``words``.
        static func words(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
            guard let base = bytes.baseAddress else { return (0, 0) }
            let raw = UnsafeRawPointer(base)
            let count = min(bytes.count, 16)
            return (word(raw, min(count, 8)), count > 8 ? word(raw + 8, count &- 8) : 0)
        }

        /// The `count` (at most eight) bytes at `raw` as a little-endian word, read in at most
        /// three loads, none past them.
        @inline(__always)
        private static func word(_ raw: UnsafeRawPointer, _ count: Int) -> UInt64 {
            if count >= 8 { return UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)) }
            var value: UInt64 = 0
            var offset = 0
            if count & 4 != 0 {
                value = UInt64(UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
                offset = 4
            }
            if count & 2 != 0 {
                let pair = UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
                value |= UInt64(pair) << UInt64(offset &* 8)
                offset &+= 2
            }
            if count & 1 != 0 {
                value |= UInt64(raw.load(fromByteOffset: offset, as: UInt8.self)) << UInt64(offset &* 8)
            }
            return value
        }

        /// The key as text, for a refusal that names it.
        var text: String {
            if let raw { return String(decoding: raw, as: UTF8.self) }
            return decoded ?? ""
        }
    }

    /// A key literal, cursor on its opening quote, matched against its bytes in the frame:
    /// no `String` is built for a key.
    private mutating func keyLiteral() throws(Failure) -> Key {
        let start = index + 1
        let end = Self.endOfPlainText(bytes, from: start)
        if end < bytes.count && bytes[end] == UInt8(ascii: "\"") {
            index = end + 1
            return Key(raw: UnsafeBufferPointer(rebasing: bytes[start..<end]), decoded: nil)
        }
        // Escapes, control characters (refused there) and DEL or non-ASCII (validated there):
        // the full reader.
        return Key(raw: nil, decoded: try stringLiteral())
    }

    /// A string literal, cursor on its opening quote; escapes decoded, UTF-8 validated.
    private mutating func stringLiteral() throws(Failure) -> String {
        index += 1
        let start = index
        var ascii = true
        // Fast path: no escapes, no control characters.
        while true {
            index = Self.endOfPlainText(bytes, from: index)
            guard index < bytes.count else { throw .syntax }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try Self.string(UnsafeBufferPointer(rebasing: bytes[start..<index]), ascii: ascii)
                index += 1
                if !ascii { allPlain = false }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw .syntax }
            // DEL or beyond ASCII: valid JSON, but the text checks will look.
            ascii = false
            index += 1
        }
        allPlain = false
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try decoded.withUnsafeBufferPointer { buffer throws(Failure) in
                    try Self.string(buffer, ascii: false)
                }
            case UInt8(ascii: "\\"):
                let escape = next()
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try hex4())
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else { throw .syntax }
                        let low = UInt32(try hex4())
                        guard (0xDC00..<0xE000).contains(low) else { throw .syntax }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else {
                        throw .syntax
                    }
                    decoded.append(contentsOf: encoded)
                default: throw .syntax
                }
            default:
                guard byte >= 0x20 else { throw .syntax }
                decoded.append(byte)
            }
        }
        throw .syntax
    }

    /// Where the plain text that starts at `start` ends: the index of the first quote,
    /// backslash, control character, DEL or byte beyond ASCII from there, or `bytes.count`
    /// (``TextScan``).
    static func endOfPlainText(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        TextScan.end(of: bytes, from: start, beyondASCII: true)
    }

    /// The text of UTF-8 `bytes`, refused if they are not valid UTF-8. `String(decoding:)`
    /// is the fast constructor but repairs bad bytes, so anything not plain ASCII is compared
    /// back (`String(validating:)` is slower on every string).
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, ascii: Bool) throws(Failure) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard ascii || text.utf8.elementsEqual(bytes) else { throw .syntax }
        return text
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = next()
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .syntax
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    // MARK: Bytes

    /// The byte at the cursor; 0 at the end (NUL is never valid outside a string, and strings
    /// are read from the buffer itself).
    private func peek() -> UInt8 {
        index < bytes.count ? bytes[index] : 0
    }

    /// The byte at the cursor, stepping over it; 0 at the end, staying there.
    private mutating func next() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// The first byte of the value at the cursor, past any space.
    private mutating func peekValue() -> UInt8 {
        skipSpace()
        return peek()
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while Self.isDigit(peek()) { index += 1 }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

extension WireRequest.Fields {
    /// ``names`` by their length in bytes, each as ``RequestParser/Key/words(_:)`` packs it: a
    /// key is compared only with the names as long, two words at a time.
    private static let namesByLength: [[(words: (UInt64, UInt64), field: Self)]] = {
        var table = [[(words: (UInt64, UInt64), field: Self)]](
            repeating: [], count: (names.map(\.name.utf8CodeUnitCount).max() ?? 0) + 1)
        for entry in names {
            let name = UnsafeBufferPointer(start: entry.name.utf8Start, count: entry.name.utf8CodeUnitCount)
            table[name.count].append((RequestParser.Key.words(name), entry.field))
        }
        return table
    }()

    /// The field `key` names, if the protocol has one; no `String` is made of the key.
    init?(key: RequestParser.Key) {
        let table = Self.namesByLength
        let length = key.length
        guard length < table.count, !table[length].isEmpty else { return nil }
        // Every name fits in two words (a test holds them to it).
        let words = key.words
        for entry in table[length] where entry.words == words {
            self = entry.field
            return
        }
        return nil
    }
}
