import Foundation
import QuoteCore

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

    mutating func lines(_ values: [WireQuote.Line]) {
        objects(values) { $0.line(name: $1.name, priceCents: $1.priceCents) }
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
        field("id", id)
        field("name", name)
        field("skill", skill)
        endObject()
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
        field("mechanic", value.mechanic) { $0.mechanic($1) }
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
        field("pendingReasons", value.pendingReasons) { $0.pendingReasons($1) }
        field("cancelledFrom", value.cancelledFrom)
        field("waitingFor", value.waitingFor) { $0.mechanic($1) }
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
        field("mechanic", value.mechanic) { $0.mechanic($1) }
        field("catalogVersion", value.catalogVersion)
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
        field("error", value.error) { $0.error($1) }
        if let encodedQuote {
            key("quote")
            raw(encodedQuote.json)
        } else if let quote = value.quote {
            key("quote")
            self.quote(quote)
        }
        field("history", value.history) { writer, history in
            writer.objects(history) { writer, step in
                writer.field("from", step.from)
                writer.field("to", step.to)
                writer.field("at", step.at)
                writer.field("seq", step.seq)
            }
        }
        field("replayed", value.replayed)
        field("bookingError", value.bookingError) { $0.error($1) }
        field("waitPosition", value.waitPosition)
        field("mechanic", value.mechanic) { $0.mechanic($1) }
        field("onDuty", value.onDuty)
        field("quotes", value.quotes) { writer, quotes in
            writer.beginArray()
            for quote in quotes { writer.quote(quote) }
            writer.endArray()
        }
        field("next", value.next)
        field("truncated", value.truncated)
        field("mechanics", value.mechanics) { writer, mechanics in
            writer.objects(mechanics) { writer, mechanic in
                writer.field("id", mechanic.id)
                writer.field("name", mechanic.name)
                writer.field("skill", mechanic.skill)
                writer.field("busy", mechanic.busy)
                writer.field("quoteId", mechanic.quoteId)
                writer.field("freeSince", mechanic.freeSince)
                writer.field("onDuty", mechanic.onDuty)
            }
        }
        field("services", value.services) { writer, services in
            writer.objects(services) { writer, service in
                writer.field("name", service.name)
                writer.field("minimumSkill", service.minimumSkill)
                writer.field("priceCents", service.priceCents)
                writer.field("price", service.price)
            }
        }
        field("counts", value.counts) { $0.counters($1.mapValues(Int64.init)) }
        field("events", value.events) { writer, events in
            writer.beginArray()
            for event in events { writer.event(event) }
            writer.endArray()
        }
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

    /// A catalog as a catalog file holds it.
    private mutating func catalog(_ value: CatalogDocument) {
        beginObject()
        field("currency", value.currency)
        field("services", value.services) { writer, services in
            writer.objects(services) { writer, service in
                writer.field("name", service.name)
                writer.field("minimumSkill", service.minimumSkill)
                writer.field("price", service.price)
                writer.field("priceCents", service.priceCents)
            }
        }
        field("mechanics", value.mechanics) { writer, mechanics in
            writer.objects(mechanics) { writer, mechanic in
                writer.field("id", mechanic.id)
                writer.field("name", mechanic.name)
                writer.field("skill", mechanic.skill)
            }
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
