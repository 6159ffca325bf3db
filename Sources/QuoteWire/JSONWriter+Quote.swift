import Bytes
import Foundation
import QuoteCore

extension JSONWriter {
    /// Writes `quote` as clients see it, `WireQuote(quote, currency: currency)`, straight from
    /// the domain value, and returns where its request part (customer to coupon, with the comma
    /// before) lies in the output. The only writer of a quote's layout: a test holds it to the
    /// JSON `WireQuote`'s `Codable` conformance writes, key for key at every level, for quotes
    /// in every state.
    ///
    /// Every write publishes its quotes, so this is the daemon's hottest writer: it does not
    /// build a `WireQuote` first (twenty fields copied out, two arrays allocated, all released
    /// after).
    ///
    /// With `requestFrom`, the bytes of that part for a quote with the same request, the part
    /// is copied rather than written again: a submission publishes its quote twice
    /// (submitted, then priced), with the same request.
    mutating func quote(_ quote: Quote, currency: Currency, requestFrom shared: ArraySlice<UInt8>?) -> Range<Int> {
        // Of a pricing, only what the quote shows: a copy of the whole retains its lines and
        // every currency in it.
        var price: (total: Money, discountCents: Int64, isManual: Bool)?
        var assignment: Assignment?
        var receipt: Receipt?
        var reasons: [PendingReason] = []
        var cancelledFrom: QuoteStatus?
        var waiting: (since: Date, mechanic: Mechanic?)?
        func shown(_ pricing: Pricing) -> (total: Money, discountCents: Int64, isManual: Bool) {
            (pricing.total, pricing.discount.cents, pricing.isManual)
        }
        switch quote.stage {
        case .submitted: break
        case .pending(let pending): reasons = pending
        case .ready(let priced): price = shown(priced)
        case .booked(let priced, let assigned): (price, assignment) = (shown(priced), assigned)
        case .completed(let priced, let assigned, let issued):
            (price, assignment, receipt) = (shown(priced), assigned, issued)
        case .cancelled(let from, _): cancelledFrom = from
        case .waiting(let priced, let since, let mechanic): (price, waiting) = (shown(priced), (since, mechanic))
        }
        beginObject()
        field("id", quote.id.rawValue)
        key("state")
        constant(quote.status.jsonString)
        key("message")
        message(quote)
        let requestStart = position
        if let shared {
            splice(shared)
        } else {
            key("customer")
            customer(quote.request.customer)
            key("car")
            car(quote.request.car)
            key("services")
            objects(quote.request.services) { $0.line(name: $1.name, priceCents: $1.listed?.price.cents) }
            field("preferredMechanic", quote.request.preferredMechanic?.name)
            field("coupon", quote.request.coupon?.code)
        }
        let requestPart = requestStart..<position
        field("currency", (price?.total.currency ?? currency).code)
        if let price {
            field("priceCents", price.total.cents)
            key("price")
            money(price.total)
            field("discountCents", price.discountCents)
            field("manualPrice", price.isManual)
        }
        field("mechanic", assignment?.mechanic) { $0.mechanic($1) }
        if let receipt {
            key("receipt")
            beginObject()
            key("lines")
            objects(receipt.lines) { $0.line(name: $1.service, priceCents: $1.price.cents) }
            field("subtotalCents", receipt.subtotal.cents)
            field("coupon", receipt.coupon)
            field("discountCents", receipt.discount.cents)
            field("totalCents", receipt.total.cents)
            key("total")
            money(receipt.total)
            key("mechanic")
            mechanic(receipt.mechanic)
            key("customer")
            customer(receipt.customer)
            field("completedAt", receipt.completedAt)
            endObject()
        }
        if !reasons.isEmpty {
            key("pendingReasons")
            pendingReasons(reasons)
        }
        field("cancelledFrom", cancelledFrom?.rawValue)
        if let waiting {
            field("waitingFor", waiting.mechanic) { $0.mechanic($1) }
            field("waitingSince", waiting.since)
        }
        field("submittedAt", quote.submittedAt)
        field("updatedAt", quote.updatedAt)
        field("submittedBy", quote.submittedBy)
        endObject()
        return requestPart
    }

    /// `quote`'s `Quote.customerMessage` as a string, written piece by piece.
    private mutating func message(_ quote: Quote) {
        separator()
        output.append(UInt8(ascii: "\""))
        var pieces = MessagePieces(writer: consume self)
        quote.writeCustomerMessage(into: &pieces)
        self = pieces.writer
        output.append(UInt8(ascii: "\""))
    }

    /// `amount` as a string, as `Money.formatted` shows it.
    private mutating func money(_ amount: Money) {
        separator()
        output.append(UInt8(ascii: "\""))
        amount.withFormattedBytes { escaped($0) }
        output.append(UInt8(ascii: "\""))
    }

    mutating func mechanic(_ value: Mechanic) {
        mechanic(id: value.id.rawValue, name: value.name, skill: value.skill.name)
    }
}

/// A quote's message written into a JSON string, each piece escaped.
private struct MessagePieces: ~Copyable, CustomerMessageSink {
    var writer: JSONWriter

    /// Fixed wording needs no escaping: copied as it is.
    mutating func append(fixed text: StaticString) {
        text.withUTF8Buffer { writer.output.append(UnsafeRawBufferPointer($0)) }
    }

    mutating func append(text: String) { text.withUTF8Bytes { writer.escaped($0) } }

    mutating func append(amount: Money) { amount.withFormattedBytes { writer.escaped($0) } }
}
