/// Reads the few fields the load generator needs straight from a reply's bytes, without a
/// JSON decoder: decoding every reply would cost the client more CPU than the daemon spends.
///
/// It relies on the order ``JSONWriter`` writes in (`{"v":1,"id":N,"ok":...,"quote":{"id":Q,
/// "state":"..."`), which `docs/protocol.md` does not promise: it lives beside the writer,
/// and its tests read what the writer wrote. The load generator is the only reader that
/// does this, and it checks `ok`/`error` so a change shows up as errors.
public struct ReplyScanner {
    /// The reply's (or event's) JSON frame.
    public let bytes: [UInt8]

    /// A scanner over `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The request id echoed in the reply (the first `"id":`).
    public var requestID: Int64? { integer(after: Self.idKey, from: 0)?.value }

    /// `true` for `"ok":true`; an echo (the baseline) has no `ok` and counts as success.
    public var isOK: Bool {
        guard let index = find(Self.okKey, from: 0) else { return true }
        return index < bytes.count && bytes[index] == UInt8(ascii: "t")
    }

    /// The quote's id, the second `"id":` (inside `"quote":{`).
    public var quoteID: Int64? {
        guard let quote = find(Self.quoteKey, from: 0) else { return nil }
        return integer(after: Self.idKey, from: quote)?.value
    }

    /// The quote's state, from the first `"state":"` after `"quote":{`.
    public var state: Substring? { string(after: Self.stateKey) }

    /// An event's quote id (`"quoteId":`).
    public var eventQuoteID: Int64? { integer(after: Self.quoteIDKey, from: 0)?.value }

    /// The error code, from `"code":"`: a refusal's reason (read it only when ``isOK`` is
    /// false: a quote in a success may hold codes of its own, such as a pending reason's).
    public var errorCode: Substring? { string(after: Self.codeKey) }

    private func string(after key: [UInt8]) -> Substring? {
        guard let start = find(key, from: 0) else { return nil }
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return Substring(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// The whole number just after `key`; `nil` when there is none or it is beyond `Int64`
    /// (quoted echoes an out-of-range request id as it was sent, and a peer may send anything).
    private func integer(after key: [UInt8], from offset: Int) -> (value: Int64, end: Int)? {
        guard var index = find(key, from: offset) else { return nil }
        var value: Int64 = 0
        var digits = 0
        var overflow = false
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(bytes[index] - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            value = sum
            index += 1
            digits += 1
        }
        return digits > 0 && !overflow ? (value, index) : nil
    }

    /// The index just past the first occurrence of `key` at or after `offset`.
    private func find(_ key: [UInt8], from offset: Int) -> Int? {
        guard key.count <= bytes.count else { return nil }
        var index = offset
        let last = bytes.count - key.count
        while index <= last {
            if bytes[index] == key[0] {
                var matched = 1
                while matched < key.count && bytes[index + matched] == key[matched] { matched += 1 }
                if matched == key.count { return index + key.count }
            }
            index += 1
        }
        return nil
    }

    private static let idKey = Array(#""id":"#.utf8)
    private static let okKey = Array(#""ok":"#.utf8)
    private static let quoteKey = Array(#""quote":{"#.utf8)
    private static let stateKey = Array(#""state":""#.utf8)
    private static let quoteIDKey = Array(#""quoteId":"#.utf8)
    private static let codeKey = Array(#""code":""#.utf8)
}
