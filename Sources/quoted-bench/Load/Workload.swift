import ArgumentParser
import Bytes
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
    /// Whether submissions carry an idempotency key (`<runTag>-<request id>`).
    var idempotencyKeys = true
    /// Whether bookings wait in line when no mechanic is free (`"wait": true`).
    var wait = false

    func body(_ kind: RequestKind, id: Int64, quote: Int64 = 0) -> [UInt8] {
        switch kind {
        case .submit: submit(id: id, email: "bench@example.com", trim: #","trim":"LE""#)
        case .submitPending: submit(id: id, email: "bench@example.com", trim: "")
        case .submitInvalid: submit(id: id, email: "not-an-email", trim: #","trim":"LE""#)
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

    private func submit(id: Int64, email: StaticString, trim: StaticString) -> [UInt8] {
        var body = Body()
        body.append(#"{"v":1,"id":"#)
        body.append(id)
        body.append(#","op":"submit","#)
        if idempotencyKeys {
            body.append(#""idempotencyKey":""#)
            body.append(text: runTag)
            body.append("-")
            body.append(id)
            body.append(#"","#)
        }
        body.append(#""customer":{"name":"Bench Customer","email":""#)
        body.append(email)
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

    mutating func append(_ text: StaticString) { output.append(text) }

    mutating func append(text: String) {
        text.withUTF8Bytes { output.append(UnsafeRawBufferPointer($0)) }
    }

    mutating func append(_ number: Int64) {
        if number < 0 { output.append(UInt8(ascii: "-")) }
        output.appendDigits(number.magnitude)
    }
}
