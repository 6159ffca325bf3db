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
        case .get: Array(#"{"v":1,"id":\#(id),"op":"get","quoteId":\#(quote)}"#.utf8)
        case .book:
            wait
                ? Array(#"{"v":1,"id":\#(id),"op":"book","quoteId":\#(quote),"wait":true}"#.utf8)
                : Array(#"{"v":1,"id":\#(id),"op":"book","quoteId":\#(quote)}"#.utf8)
        case .complete: Array(#"{"v":1,"id":\#(id),"op":"complete","quoteId":\#(quote)}"#.utf8)
        case .cancel: Array(#"{"v":1,"id":\#(id),"op":"cancel","quoteId":\#(quote),"reason":"bench"}"#.utf8)
        }
    }

    private func submit(id: Int64, email: String, trim: String) -> [UInt8] {
        let key = idempotencyKeys ? #""idempotencyKey":"\#(runTag)-\#(id)","# : ""
        return Array(
            (#"{"v":1,"id":\#(id),"op":"submit",\#(key)"#
                + #""customer":{"name":"Bench Customer","email":"\#(email)","address":"1 Loop Road"},"#
                + #""car":{"make":"Toyota","model":"Camry","year":2015\#(trim)},"#
                + #""services":["Oil Change","Brake Inspection"]}"#).utf8)
    }
}
