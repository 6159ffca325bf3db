import Bytes
import Foundation
import QuoteCore
import QuoteStore

// The protocol's values, as docs/protocol.md lays them out.

extension JSONWriter {
    /// `[...]`, one object per element, its members written by `members`.
    mutating func objects<Element>(_ values: some Sequence<Element>, _ members: (inout JSONWriter, Element) -> Void) {
        beginArray()
        for value in values {
            beginObject()
            members(&self, value)
            endObject()
        }
        endArray()
    }

    /// `"name":` and the value `write` writes, skipped when `value` is absent.
    @inline(__always)
    mutating func field<Value>(_ name: StaticString, _ value: Value?, _ write: (inout JSONWriter, Value) -> Void) {
        guard let value else { return }
        key(name)
        write(&self, value)
    }

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

    /// The members of a service line of a quote or a receipt.
    mutating func line(name: String, priceCents: Int64?) {
        field("name", name)
        field("priceCents", priceCents)
    }

    mutating func mechanic(_ value: WireQuote.WireMechanic) {
        mechanic(id: value.id, name: value.name, skill: value.skill)
    }

    mutating func mechanic(id: Int64, name: String, skill: String) {
        beginObject()
        mechanicMembers(id: id, name: name, skill: skill)
        endObject()
    }

    /// The members every mechanic has, in a quote, a roster or a catalog.
    private mutating func mechanicMembers(id: Int64, name: String, skill: String) {
        field("id", id)
        field("name", name)
        field("skill", skill)
    }

    /// The members of a catalog service, in a catalog or a list of services.
    private mutating func service(name: String, minimumSkill: String, priceCents: Int64?, price: String?) {
        field("name", name)
        field("minimumSkill", minimumSkill)
        field("priceCents", priceCents)
        field("price", price)
    }

    /// The members of one step of a quote's history.
    private mutating func historyStep(_ step: WireReply.HistoryStep) {
        field("from", step.from)
        field("to", step.to)
        field("at", step.at)
        field("seq", step.seq)
    }

    mutating func pendingReasons(_ reasons: [PendingReason]) {
        objects(reasons) { writer, reason in
            writer.field("code", reason.code)
            writer.field("field", reason.field)
            writer.field("message", reason.message)
        }
    }

    mutating func error(_ value: WireError) {
        beginObject()
        field("code", value.code.rawValue)
        field("message", value.message)
        field("problems", value.problems) { writer, problems in
            writer.objects(problems) { writer, problem in
                writer.field("field", problem.field)
                writer.field("message", problem.message)
            }
        }
        endObject()
    }

    /// Writes a value already encoded as JSON, such as a quote shared by a reply and an event.
    mutating func raw(_ json: [UInt8]) {
        separator()
        json.withUnsafeBytes { output.append($0) }
    }

    /// Writes a value already encoded as JSON, from part of a frame.
    mutating func raw(_ json: ArraySlice<UInt8>) {
        separator()
        json.withUnsafeBytes { output.append($0) }
    }

    /// Where a quote written in place lies in the output, and its request part
    /// (``quote(_:currency:requestFrom:)``): so that the frame's bytes can be shared with the
    /// next frame that shows it (``EncodedQuote``).
    typealias WrittenQuote = (json: Range<Int>, requestPart: Range<Int>)

    /// Writes `quote` in place, after its key, as ``quote(_:currency:requestFrom:)`` does,
    /// and returns where it lies.
    private mutating func quoteInPlace(
        _ quote: Quote, currency: Currency, requestFrom shared: ArraySlice<UInt8>?
    ) -> WrittenQuote {
        let start = position
        let requestPart = self.quote(quote, currency: currency, requestFrom: shared)
        return (start..<position, requestPart)
    }

    /// `[...]` of values already encoded as JSON.
    private mutating func rawArray(_ values: ArraySlice<[UInt8]>) {
        beginArray()
        for json in values { raw(json) }
        endArray()
    }

    /// An event whose quote, if it has one, is `encodedQuote`, already encoded (the event's own
    /// `quote` is not read: quotes are written from the domain, or by `Codable`, never here).
    mutating func event(_ value: WireEvent, quote encodedQuote: EncodedQuote?) {
        event(
            v: Int64(value.v), seq: value.seq, type: .text(value.type), at: value.at, quoteId: value.quoteId,
            from: value.from.map(JSONStringValue.text), to: value.to.map(JSONStringValue.text), by: value.by,
            hasQuote: encodedQuote != nil,
            quote: { writer in if let encodedQuote { writer.raw(encodedQuote.json) } },
            catalogVersion: value.catalogVersion,
            mechanic: { writer in writer.field("mechanic", value.mechanic) { $0.mechanic($1) } })
    }

    /// `event` as ``WireEvent/init(_:currency:)`` shows it, written straight from the
    /// log (no `WireEvent` built: two are published for every write), its quote
    /// `encodedQuote`.
    mutating func event(_ event: StoredEvent, quote encodedQuote: EncodedQuote?) {
        self.event(
            event, hasQuote: encodedQuote != nil,
            quote: { writer in if let encodedQuote { writer.raw(encodedQuote.json) } })
    }

    /// `event` as ``event(_:quote:)-(StoredEvent,_)`` writes it, its quote `quote` written
    /// in place (its request part copied from `shared` when given); returns where that lies.
    mutating func event(
        _ event: StoredEvent, writing quote: Quote, currency: Currency, requestFrom shared: ArraySlice<UInt8>?
    ) -> WrittenQuote {
        var written: WrittenQuote = (0..<0, 0..<0)
        self.event(
            event, hasQuote: true,
            quote: { writer in written = writer.quoteInPlace(quote, currency: currency, requestFrom: shared) })
        return written
    }

    /// A logged event, its quote (if `hasQuote`) written by `quote`.
    private mutating func event(_ event: StoredEvent, hasQuote: Bool, quote: (inout JSONWriter) -> Void) {
        // A quote's change, nearly every event: its members read straight from the quote, not
        // gathered into a `Members` first (copied twice, each of its strings retained).
        if case .quote(let from, let changed) = event.kind {
            // Its type and states are constants, copied whole.
            return self.event(
                v: 1, seq: event.seq, type: .constant(event.eventType.jsonString), at: event.at,
                quoteId: changed.id.rawValue, from: from.map { .constant($0.jsonString) },
                to: .constant(changed.status.jsonString), by: event.by, hasQuote: hasQuote, quote: quote,
                catalogVersion: nil, mechanic: { _ in })
        }
        let members = WireEvent.Members(event.kind)
        self.event(
            v: 1, seq: event.seq, type: .constant(event.eventType.jsonString), at: event.at, quoteId: members.quoteId,
            from: members.from.map(JSONStringValue.text), to: members.to.map(JSONStringValue.text), by: event.by,
            hasQuote: hasQuote, quote: quote, catalogVersion: members.catalogVersion,
            mechanic: { writer in writer.field("mechanic", members.mechanic) { $0.mechanic($1) } })
    }

    /// An event's layout, the one place that writes it; `quote` writes its quote, if
    /// `hasQuote`, and `mechanic` its mechanic.
    private mutating func event(
        v: Int64, seq: Int64, type: JSONStringValue, at: Date, quoteId: Int64?, from: JSONStringValue?,
        to: JSONStringValue?, by: String?,
        hasQuote: Bool, quote: (inout JSONWriter) -> Void, catalogVersion: Int64?,
        mechanic: (inout JSONWriter) -> Void
    ) {
        beginObject()
        field("v", v)
        field("seq", seq)
        field("type", type)
        field("at", at)
        field("quoteId", quoteId)
        field("from", from)
        field("to", to)
        field("by", by)
        if hasQuote {
            key("quote")
            quote(&self)
        }
        mechanic(&self)
        field("catalogVersion", catalogVersion)
        endObject()
    }

    /// A reply whose `quote`, `quotes` and `events` are the JSON given, already encoded (the
    /// reply's own fields of those names are not read).
    mutating func reply(
        _ value: WireReply, quote encodedQuote: EncodedQuote?, quotes: ArraySlice<[UInt8]>?,
        events: ArraySlice<[UInt8]>?
    ) {
        reply(
            value, hasQuote: encodedQuote != nil,
            quote: { writer in if let encodedQuote { writer.raw(encodedQuote.json) } }, quotes: quotes, events: events)
    }

    /// A reply whose `quote` is `quote`, written in place (the reply's own `quote` is not
    /// read); returns where that lies.
    mutating func reply(_ value: WireReply, writing quote: Quote, currency: Currency) -> WrittenQuote {
        var written: WrittenQuote = (0..<0, 0..<0)
        reply(
            value, hasQuote: true,
            quote: { writer in written = writer.quoteInPlace(quote, currency: currency, requestFrom: nil) },
            quotes: nil, events: nil)
        return written
    }

    /// A reply's layout, the one place that writes it; `quote` writes its quote, if
    /// `hasQuote`.
    private mutating func reply(
        _ value: WireReply, hasQuote: Bool, quote: (inout JSONWriter) -> Void, quotes: ArraySlice<[UInt8]>?,
        events: ArraySlice<[UInt8]>?
    ) {
        replyHead(v: value.v, id: value.id, ok: value.ok, error: value.error)
        if hasQuote {
            key("quote")
            quote(&self)
        }
        field("history", value.history) { writer, history in
            writer.objects(history) { $0.historyStep($1) }
        }
        writeMembers(
            WriteMembers(
                replayed: value.replayed, bookingError: value.bookingError, waitPosition: value.waitPosition,
                mechanic: value.mechanic, onDuty: value.onDuty, catalogVersion: nil))
        field("quotes", quotes) { $0.rawArray($1) }
        field("next", value.next)
        field("truncated", value.truncated)
        field("mechanics", value.mechanics) { writer, mechanics in
            writer.objects(mechanics) { writer, mechanic in
                writer.mechanicMembers(id: mechanic.id, name: mechanic.name, skill: mechanic.skill)
                writer.field("busy", mechanic.busy)
                writer.field("quoteId", mechanic.quoteId)
                writer.field("freeSince", mechanic.freeSince)
                writer.field("onDuty", mechanic.onDuty)
            }
        }
        field("services", value.services) { writer, services in
            writer.objects(services) {
                $0.service(name: $1.name, minimumSkill: $1.minimumSkill, priceCents: $1.priceCents, price: $1.price)
            }
        }
        field("counts", value.counts) { $0.counters($1.mapValues(Int64.init)) }
        field("events", events) { $0.rawArray($1) }
        field("lastSeq", value.lastSeq)
        field("pong", value.pong)
        field("store", value.store)
        field("storeError", value.storeError)
        field("oldestWaitMilliseconds", value.oldestWaitMilliseconds)
        field("mechanicCounts", value.mechanicCounts) { $0.counters($1.mapValues(Int64.init)) }
        field("activity", value.activity) { $0.activity($1) }
        field("catalogVersion", value.catalogVersion)
        field("catalog", value.catalog) { $0.catalog($1) }
        endObject()
    }

    /// A successful write's reply, its `quote` written in place, as the layout above writes
    /// `WireReply.success(id)` with `members` set: the same members in the same order, the
    /// others absent. Without a `WireReply` built: a write's reply is the daemon's most frequent
    /// frame, and a `WireReply` is forty members to set and destroy. Returns where the quote lies.
    mutating func writeReply(
        id: RequestID?, _ members: WriteMembers, writing quote: Quote, currency: Currency
    ) -> WrittenQuote {
        replyHead(v: 1, id: id, ok: true, error: nil)
        key("quote")
        let written = quoteInPlace(quote, currency: currency, requestFrom: nil)
        writeMembers(members)
        field("catalogVersion", members.catalogVersion)
        endObject()
        return written
    }

    /// A reply's first members, the object opened.
    private mutating func replyHead(v: Int, id: RequestID?, ok: Bool, error: WireError?) {
        beginObject()
        field("v", v)
        if let id {
            key("id")
            switch id {
            case .string(let text): string(text)
            case .number(let number): int(number)
            case .outOfRange(let digits): raw(Array(digits.utf8))
            }
        }
        field("ok", ok)
        field("error", error) { $0.error($1) }
    }

    /// The members a write's reply adds after its quote (not `catalogVersion`, which comes
    /// near the end of a reply).
    private mutating func writeMembers(_ members: WriteMembers) {
        field("replayed", members.replayed)
        field("bookingError", members.bookingError) { $0.error($1) }
        field("waitPosition", members.waitPosition)
        field("mechanic", members.mechanic) { $0.mechanic($1) }
        field("onDuty", members.onDuty)
    }

    /// A catalog as a catalog file holds it.
    private mutating func catalog(_ value: CatalogDocument) {
        beginObject()
        field("currency", value.currency)
        field("services", value.services) { writer, services in
            writer.objects(services) {
                $0.service(name: $1.name, minimumSkill: $1.minimumSkill, priceCents: $1.priceCents, price: $1.price)
            }
        }
        field("mechanics", value.mechanics) { writer, mechanics in
            writer.objects(mechanics) { $0.mechanicMembers(id: $1.id, name: $1.name, skill: $1.skill) }
        }
        field("coupons", value.coupons) { writer, coupons in
            writer.objects(coupons) { writer, coupon in
                writer.field("code", coupon.code)
                writer.field("percentOff", coupon.percentOff)
                writer.field("amountOff", coupon.amountOff)
                writer.field("expires", coupon.expires)
            }
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
