import Foundation
public import QuoteCore
import QuoteStore

/// Encodes and decodes protocol frames. One codec per thread: it reuses its coders.
public struct WireCodec {
    private let encoder: JSONEncoder
    private let decoder: JSONDecoder
    /// The last date this codec's writers wrote (why one codec per thread).
    private let dates = DateCache()
    /// The buffer its writers write into, one at a time.
    private let buffer = WriterBuffer()

    /// Creates a codec; dates are RFC 3339 with milliseconds, in UTC.
    public init() {
        encoder = JSONEncoder()
        // Sorted: Foundation's encoder keeps no order of its own, and a frame is the same
        // bytes every time it is written.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The writer's own times, not the format style's, which is sometimes a millisecond
        // early (it truncates `x.554` held as `x.55399999`).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.timeText(date))
        }
        decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = try? Date(text, strategy: Self.timeFormat) { return date }
            if let date = try? Date(text, strategy: .iso8601) { return date }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not an RFC 3339 time")
        }
    }

    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// `date` as every frame writes it: RFC 3339, in UTC, to the millisecond, truncated.
    static func timeText(_ date: Date) -> String {
        var writer = JSONWriter(capacity: 32)
        writer.date(date)
        return String(decoding: writer.bytes.dropFirst().dropLast(), as: UTF8.self)
    }

    /// What `body` writes, copied out of the codec's buffer, and what it returns.
    private func writing<Result>(
        capacity: Int, _ body: (inout JSONWriter) -> Result
    ) -> (bytes: [UInt8], result: Result) {
        var writer = JSONWriter(output: buffer.take(capacity: capacity), dates: dates)
        let result = body(&writer)
        let bytes = writer.bytes
        buffer.giveBack(writer.takeOutput())
        return (bytes, result)
    }

    /// Decodes a request frame; a frame that is not JSON, or has fields of the wrong type,
    /// becomes the error to reply with. Hand-parsed (``RequestParser``): this is the daemon's
    /// hot path.
    public func decodeRequest(_ bytes: [UInt8]) -> Result<WireRequest, WireError> {
        RequestParser.parse(bytes)
    }

    /// ``decodeRequest(_:)``, with the request's `id` beside a refusal whenever the frame is
    /// a JSON object with a valid `id`: every reply carries its request's `id` but those to
    /// frames that are not JSON (`invalid_json`).
    public func decodeRequestKeepingID(_ bytes: [UInt8]) -> (result: Result<WireRequest, WireError>, id: RequestID?) {
        RequestParser.parseKeepingID(bytes)
    }

    /// ``decodeRequestKeepingID(_:)`` into `request`, which starts empty: the refusal, if
    /// any, and the `id` to answer with. The decoder's path: nothing is copied.
    func decodeRequest(_ bytes: [UInt8], into request: inout WireRequest) -> (refusal: WireError?, id: RequestID?) {
        RequestParser.parse(bytes, into: &request)
    }

    /// Decodes any protocol value, such as a reply or an event (for clients).
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    /// Encodes a reply frame (hand-written JSON, no `JSONEncoder` on the hot path). Quotes in
    /// it (`quote`, `quotes`, the `events`' quotes) are written by their `Codable`
    /// conformance: a client re-encoding what it decoded; the daemon writes its quotes from
    /// the domain (``encodeQuote(_:currency:sharingRequestWith:)``).
    public func encode(_ reply: WireReply) -> [UInt8] {
        encode(
            reply, quote: reply.quote.map(encodeQuote),
            quotes: reply.quotes.map { ArraySlice($0.map { Array(encodeQuote($0).json) }) },
            events: reply.events.map { ArraySlice($0.map { encode($0) }) })
    }

    /// Encodes an event body frame (hand-written JSON, no `JSONEncoder` on the hot path); its
    /// quote, if any, as ``encode(_:)-(WireReply)`` writes quotes.
    public func encode(_ event: WireEvent) -> [UInt8] {
        let quote = event.quote.map(encodeQuote)
        return writing(capacity: 1_024) { $0.event(event, quote: quote) }.bytes
    }

    /// Encodes a quote as clients decoded it, by its `Codable` conformance (its keys
    /// sorted), for a frame that carries it (``encode(_:quote:)-(WireReply,_)``,
    /// ``encode(_:quote:)-(WireEvent,_)``).
    public func encodeQuote(_ quote: WireQuote) -> EncodedQuote {
        EncodedQuote(json: ArraySlice(encode(quote)))
    }

    /// Encodes `quote` as clients see it (``WireQuote``), written straight from the domain
    /// value, in a buffer of its own: for a quote not written in place in the first frame
    /// that shows it (``encode(_:writing:currency:)``).
    ///
    /// With `sibling`, the JSON of a quote whose `request` is the same (`==`), such as the
    /// submitted and priced states of one submission, the customer, car, services, mechanic
    /// and coupon are copied from it rather than written again.
    public func encodeQuote(_ quote: Quote, currency: Currency, sharingRequestWith sibling: EncodedQuote? = nil)
        -> EncodedQuote
    {
        let shared = sibling?.requestBytes
        let (bytes, requestPart) = writing(capacity: sibling?.json.count ?? 768) {
            $0.quote(quote, currency: currency, requestFrom: shared)
        }
        return EncodedQuote(json: ArraySlice(bytes), requestPart: requestPart)
    }

    /// `quote`'s JSON, as ``encodeQuote(_:currency:sharingRequestWith:)`` writes it, as an
    /// array: for a list of quotes.
    func quoteJSON(_ quote: Quote, currency: Currency) -> [UInt8] {
        writing(capacity: 768) { _ = $0.quote(quote, currency: currency, requestFrom: nil) }.bytes
    }

    /// Encodes a reply frame whose `quote` is `quote`, already encoded (the reply's own
    /// `quote` field is not read).
    public func encode(_ reply: WireReply, quote: EncodedQuote) -> [UInt8] {
        encode(reply, quote: quote, quotes: nil, events: nil)
    }

    /// Encodes a reply frame whose `quote` is `quote`, written in place from the domain (the
    /// reply's own `quote` field is not read), and returns that quote's JSON too: part of the
    /// reply's bytes, shared rather than copied, for the events that show the same state. A
    /// write's reply and the event announcing its final state show one quote, most of
    /// either's bytes: it is written once, in neither's buffer but the reply's.
    public func encode(_ reply: WireReply, writing quote: Quote, currency: Currency)
        -> (reply: [UInt8], quote: EncodedQuote)
    {
        let (bytes, written) = writing(capacity: 1_792) { $0.reply(reply, writing: quote, currency: currency) }
        return (bytes, EncodedQuote(json: bytes[written.json], requestPart: written.requestPart))
    }

    /// Encodes a successful write's reply, `members` beside its quote `quote`, as
    /// ``encode(_:writing:currency:)`` encodes the equal `WireReply`, and the quote's JSON
    /// within it, as that does.
    func encodeWrite(id: RequestID?, _ members: WriteMembers, writing quote: Quote, currency: Currency)
        -> (reply: [UInt8], quote: EncodedQuote)
    {
        let (bytes, written) = writing(capacity: 1_792) {
            $0.writeReply(id: id, members, writing: quote, currency: currency)
        }
        return (bytes, EncodedQuote(json: bytes[written.json], requestPart: written.requestPart))
    }

    /// Encodes a reply frame whose `quote`, `quotes` and `events` are the JSON given (the
    /// reply's own fields of those names are not read).
    func encode(
        _ reply: WireReply, quote: EncodedQuote?, quotes: ArraySlice<[UInt8]>?, events: ArraySlice<[UInt8]>?
    ) -> [UInt8] {
        let parts =
            (quote?.json.count ?? 0) + (quotes?.reduce(0) { $0 + $1.count + 1 } ?? 0)
            + (events?.reduce(0) { $0 + $1.count + 1 } ?? 0)
        return writing(capacity: parts + 1_024) { $0.reply(reply, quote: quote, quotes: quotes, events: events) }.bytes
    }

    /// Encodes an event body frame whose `quote` is `quote`, already encoded (the event's own
    /// `quote` field is not read).
    public func encode(_ event: WireEvent, quote: EncodedQuote) -> [UInt8] {
        writing(capacity: quote.json.count + 160) { $0.event(event, quote: quote) }.bytes
    }

    /// Encodes `event` as it is published, straight from the log, with its quote `quote`
    /// (encoded from the domain; `nil` for an event without one).
    func encode(_ event: StoredEvent, quote: EncodedQuote?) -> [UInt8] {
        writing(capacity: (quote?.json.count ?? 0) + 192) { $0.event(event, quote: quote) }.bytes
    }

    /// Encodes `event` as it is published, straight from the log, with its quote `quote`
    /// written in place (its request part copied from `sibling`'s, as
    /// ``encodeQuote(_:currency:sharingRequestWith:)`` copies it), and returns that quote's
    /// JSON too, part of the event's bytes, for the next frame that shows it.
    func encode(
        _ event: StoredEvent, writing quote: Quote, currency: Currency, sharingRequestWith sibling: EncodedQuote?
    ) -> (event: [UInt8], quote: EncodedQuote) {
        let shared = sibling?.requestBytes
        let (bytes, written) = writing(capacity: (sibling?.json.count ?? 768) + 192) {
            $0.event(event, writing: quote, currency: currency, requestFrom: shared)
        }
        return (bytes, EncodedQuote(json: bytes[written.json], requestPart: written.requestPart))
    }

    /// Encodes any protocol value as one frame.
    public func encode(_ value: some Encodable) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            // Our types always encode; keep the daemon up regardless.
            return Array(#"{"v":1,"ok":false,"error":{"code":"internal","message":"encoding failed"}}"#.utf8)
        }
    }
}

/// A quote's JSON object, encoded once, in a buffer of its own
/// (``WireCodec/encodeQuote(_:currency:sharingRequestWith:)``) or in place in the first frame
/// that shows it, and spliced into every other frame that carries it.
public struct EncodedQuote: Sendable, Hashable {
    /// The JSON object's bytes: a whole buffer, or the part of a frame where it was written.
    public let json: ArraySlice<UInt8>
    /// Where its request part lies in ``json`` (by ``json``'s own indices), when written from
    /// a domain quote.
    let requestPart: Range<Int>?

    init(json: ArraySlice<UInt8>, requestPart: Range<Int>? = nil) {
        self.json = json
        self.requestPart = requestPart
    }

    /// The bytes of its request part, for a quote with the same request to copy; `nil` when
    /// it was not written from a domain quote.
    var requestBytes: ArraySlice<UInt8>? { requestPart.map { json[$0] } }

    /// Equal when the JSON is: where the request part lies is a detail of how it was written.
    public static func == (lhs: EncodedQuote, rhs: EncodedQuote) -> Bool { lhs.json == rhs.json }

    public func hash(into hasher: inout Hasher) { hasher.combine(json) }
}
