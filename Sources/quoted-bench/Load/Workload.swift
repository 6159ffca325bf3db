import ArgumentParser

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
            body.append(runTag)
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
/// Written through a pointer into room made once, not appended to an array piece by piece:
/// `quoted-bench engine` counts the instructions of everything in its process, and what the
/// generator spends on a frame should not read as the daemon's.
private struct Body {
    private var storage: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity = 512

    init() { storage = .allocate(capacity: capacity) }

    /// The body written, the buffer freed.
    consuming func finish() -> [UInt8] {
        defer { storage.deallocate() }
        return Array(UnsafeBufferPointer(start: storage, count: count))
    }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        capacity = max(capacity * 2, count + extra)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.initialize(from: storage, count: count)
        storage.deallocate()
        storage = grown
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        reserve(bytes.count)
        (storage + count).initialize(from: base, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append($0) }
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    mutating func append(_ number: Int64) {
        reserve(20)
        if number < 0 {
            storage[count] = UInt8(ascii: "-")
            count += 1
        }
        var value = number.magnitude
        let start = count
        repeat {
            storage[count] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            count += 1
        } while value > 0
        // Written least significant first: turned around in place.
        var (low, high) = (start, count - 1)
        while low < high {
            (storage[low], storage[high]) = (storage[high], storage[low])
            low += 1
            high -= 1
        }
    }
}
