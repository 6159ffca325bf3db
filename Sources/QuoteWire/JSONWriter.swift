import Bytes
import Foundation
import QuoteCore

/// Writes JSON straight into a byte buffer. Replies and events go out through this, not
/// `JSONEncoder`: on this machine Foundation's encoder manages a few tens of thousands of
/// nested quotes a second, a fraction of what one I/O thread must publish.
///
/// The bytes go into a `ByteOutput` (module `Bytes`, shared with the stored codecs), not an
/// `Array`: every `append` to an array checks that its storage is unique and has room, and
/// `append(contentsOf:)` goes through a generic path, and on this path those checks cost more
/// than the bytes. The writer and its buffer are noncopyable structs, not a class,
/// so that no access pays for a runtime exclusivity check. Which containers need a comma
/// before their next value is a bit per nesting level, not an array of flags.
struct JSONWriter: ~Copyable {
    /// The bytes written so far; the other `JSONWriter` files append through it.
    var output: ByteOutput
    /// Bit `n` set: the container at depth `n` has a value, so the next one needs a comma.
    private var commas: UInt64 = 0
    private var depth = 0

    /// The last date written on this thread, shared by the writers of one ``WireCodec``.
    let dates: DateCache?

    init(capacity: Int = 1_024, dates: DateCache? = nil) {
        output = ByteOutput(capacity: capacity)
        self.dates = dates
    }

    /// A writer over `output`, emptied (a buffer kept from an earlier writer: ``WriterBuffer``).
    init(output: consuming ByteOutput, dates: DateCache?) {
        self.output = output
        self.dates = dates
    }

    /// The buffer, given back once its bytes are copied out (``bytes``).
    consuming func takeOutput() -> ByteOutput { output }

    /// What has been written.
    var bytes: [UInt8] { output.array }

    /// How many bytes have been written.
    var position: Int { output.count }

    /// Appends bytes written before by the same kind of writer, as they are: no separator.
    mutating func splice(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { output.append($0) }
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }

    mutating func endObject() { close(UInt8(ascii: "}")) }

    mutating func beginArray() { open(UInt8(ascii: "[")) }

    mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Opens an object or array (`bracket`) one level deeper.
    private mutating func open(_ bracket: UInt8) {
        separator()
        output.append(bracket)
        precondition(depth < 63, "JSON nested deeper than 63 levels")
        depth += 1
        noCommaBeforeNext()
    }

    private mutating func close(_ bracket: UInt8) {
        output.append(bracket)
        depth -= 1
    }

    /// Writes `"name":` inside an object. Inlined: at each call the key's length is a
    /// constant, so its bytes are copied in a word or two, without a call or a loop.
    @inline(__always) mutating func key(_ name: StaticString) {
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
        value.withUTF8Bytes { utf8 in
            guard !output.appendPlainString(utf8) else { return }
            output.append(UInt8(ascii: "\""))
            escaped(utf8)
            output.append(UInt8(ascii: "\""))
        }
    }

    /// Appends `utf8` as the inside of a JSON string, escaped.
    mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
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

    /// Whether `bytes` hold a quote, a backslash or a control character (``TextScan``): most
    /// text holds none and is copied whole.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        TextScan.end(of: bytes, from: 0, beyondASCII: false) < bytes.count
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

    // Convenience: a key and its value, skipped when the value is absent.

    // Inlined, as ``key(_:)`` is: at each call the key is a constant.

    @inline(__always) mutating func field(_ name: StaticString, _ value: String?) {
        field(name, value) { $0.string($1) }
    }

    @inline(__always) mutating func field(_ name: StaticString, _ value: Int64?) { field(name, value) { $0.int($1) } }

    @inline(__always) mutating func field(_ name: StaticString, _ value: JSONStringValue?) {
        guard let value else { return }
        key(name)
        switch value {
        case .constant(let json): constant(json)
        case .text(let text): string(text)
        }
    }

    /// A value that is JSON already and one of the protocol's constants (a state or an event
    /// type as a string: `QuoteStatus.jsonString`): copied whole, never scanned.
    @inline(__always) mutating func constant(_ json: StaticString) {
        separator()
        output.append(json)
    }

    @inline(__always) mutating func field(_ name: StaticString, _ value: Int?) { field(name, value.map(Int64.init)) }

    @inline(__always) mutating func field(_ name: StaticString, _ value: Bool?) { field(name, value) { $0.bool($1) } }

    @inline(__always) mutating func field(_ name: StaticString, _ value: Date?) { field(name, value) { $0.date($1) } }

    /// Before a value: a comma if its container already has one (none at the top level).
    @inline(__always) mutating func separator() {
        guard depth > 0 else { return }
        let bit: UInt64 = 1 << UInt64(depth)
        if commas & bit != 0 { output.append(UInt8(ascii: ",")) }
        commas |= bit
    }
}
