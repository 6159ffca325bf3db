import ArgumentParser
import Bytes
import Foundation
import QuoteClient
import QuoteCore

/// What the load generator asks quoted to do.
enum Workload: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// Valid, auto-priced submissions only.
    case submit
    /// Submissions (some pending, some invalid), gets, books, completes and cancels.
    case mixed
    /// Many clients booking against few mechanics, completing to free them.
    case contention
}

/// How the submissions' idempotency keys follow each other, which decides where each lands in
/// quoted's index of keys.
enum KeyOrder: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// `<run>-<request number>`: each key next to the last.
    case ordered
    /// Version 7 UUIDs, as the client library makes them: ordered by the millisecond.
    case time
    /// Version 4 UUIDs: anywhere in the index.
    case random
}

/// What one request is, to count its reply under the right heading.
enum RequestKind: Int, CaseIterable, Sendable {
    case submit, submitPending, submitInvalid, get, book, complete, cancel

    var name: String {
        switch self {
        case .submit: "submit"
        case .submitPending: "submit (pending)"
        case .submitInvalid: "submit (invalid)"
        case .get: "get"
        case .book: "book"
        case .complete: "complete"
        case .cancel: "cancel"
        }
    }
}

/// Builds request bodies by splicing a few values into fixed text: the generator must not
/// spend more per request than the daemon does.
struct RequestFactory: Sendable {
    /// Distinguishes this run's idempotency keys from any earlier run's against the same store.
    let runTag: String
    /// The same for the keys' random bits (``KeyOrder/time``, ``KeyOrder/random``).
    private let runSeed: UInt64
    /// Whether submissions carry an idempotency key.
    var idempotencyKeys = true
    /// How those keys follow each other.
    var keyOrder = KeyOrder.ordered
    /// Whether each submission is a new customer's (a name and email of its own), rather than
    /// all one customer's.
    var distinctCustomers = false

    /// Whether bookings wait in line when no mechanic is free (`"wait": true`).
    var wait = false

    init(runTag: String) {
        self.runTag = runTag
        // FNV-1a of the tag.
        runSeed = runTag.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    func body(_ kind: RequestKind, id: Int64, quote: Int64 = 0) -> [UInt8] {
        switch kind {
        case .submit: submit(id: id, validEmail: true, trim: #","trim":"LE""#)
        case .submitPending: submit(id: id, validEmail: true, trim: "")
        case .submitInvalid: submit(id: id, validEmail: false, trim: #","trim":"LE""#)
        case .get: onQuote(id: id, op: "get", quote: quote, tail: "}")
        case .book: onQuote(id: id, op: "book", quote: quote, tail: wait ? #","wait":true}"# : "}")
        case .complete: onQuote(id: id, op: "complete", quote: quote, tail: "}")
        case .cancel: onQuote(id: id, op: "cancel", quote: quote, tail: #","reason":"bench"}"#)
        }
    }

    /// `{"v":1,"id":<id>,"op":"<op>","quoteId":<quote>` and `tail`.
    private func onQuote(id: Int64, op: StaticString, quote: Int64, tail: StaticString) -> [UInt8] {
        var body = Body()
        body.append(#"{"v":1,"id":"#)
        body.append(id)
        body.append(#","op":""#)
        body.append(op)
        body.append(#"","quoteId":"#)
        body.append(quote)
        body.append(tail)
        return body.finish()
    }

    private func submit(id: Int64, validEmail: Bool, trim: StaticString) -> [UInt8] {
        var body = Body()
        body.append(#"{"v":1,"id":"#)
        body.append(id)
        body.append(#","op":"submit","#)
        if idempotencyKeys {
            body.append(#""idempotencyKey":""#)
            switch keyOrder {
            case .ordered:
                body.append(text: runTag)
                body.append("-")
                body.append(id)
            case .time:
                // Random bits from the request number: the system's generator is a system call.
                var random = SplitMix(seed: runSeed ^ UInt64(bitPattern: id))
                body.append(text: IdempotencyKey.make(using: &random))
            case .random:
                var random = SplitMix(seed: runSeed ^ UInt64(bitPattern: id))
                body.appendUUID(
                    high: random.next() & 0xFFFF_FFFF_FFFF_0FFF | 0x4000,
                    low: random.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
            }
            body.append(#"","#)
        }
        if distinctCustomers {
            // A customer of its own, anywhere in the indexes of names and emails.
            var random = SplitMix(seed: ~runSeed ^ UInt64(bitPattern: id))
            let customer = Int64(bitPattern: random.next() >> 2)
            body.append(#""customer":{"name":"Customer "#)
            body.append(customer)
            body.append(#"","email":""#)
            if validEmail {
                body.append("c")
                body.append(customer)
                body.append("@example.com")
            } else {
                body.append("not-an-email")
            }
        } else {
            body.append(#""customer":{"name":"Bench Customer","email":""#)
            body.append(validEmail ? "bench@example.com" : "not-an-email")
        }
        body.append(#"","address":"1 Loop Road"},"car":{"make":"Toyota","model":"Camry","year":2015"#)
        body.append(trim)
        body.append(#"},"services":["Oil Change","Brake Inspection"]}"#)
        return body.finish()
    }
}

/// A request body written byte by byte: fixed text and decimal numbers, no `String` built.
///
/// Written into a `ByteOutput` (room made once, no array append per piece): `quoted-bench
/// engine` counts every instruction of its process, and what the generator spends on a frame
/// should not read as the daemon's.
private struct Body: ~Copyable {
    private var output = ByteOutput(capacity: 384)

    /// The body written.
    consuming func finish() -> [UInt8] { output.array }

    // Inlined: each piece's length is then a constant, copied in a word or two.
    @inline(__always) mutating func append(_ text: StaticString) { output.append(text) }

    mutating func append(text: String) {
        text.withUTF8Bytes { output.append(UnsafeRawBufferPointer($0)) }
    }

    /// `high` and `low` as a UUID's text, in lowercase.
    mutating func appendUUID(high: UInt64, low: UInt64) {
        for nibble in 0..<32 {
            if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 { output.append(UInt8(ascii: "-")) }
            let value = UInt8(truncatingIfNeeded: (nibble < 16 ? high : low) >> UInt64(60 - 4 * (nibble % 16))) & 0xF
            output.append(value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10)
        }
    }

    mutating func append(_ number: Int64) {
        if number < 0 { output.append(UInt8(ascii: "-")) }
        output.appendDigits(number.magnitude)
    }
}
