import Foundation
import QuoteCore

extension JSONWriter {
    /// Writes `quote` byte for byte as `quote(WireQuote(quote, currency: currency))` does,
    /// straight from the domain value, and returns where its request part (customer to
    /// coupon, with the comma before) lies in the output.
    ///
    /// Every write publishes its quotes, so this is the daemon's hottest writer: it does not
    /// build a `WireQuote` first (twenty fields copied out, two arrays allocated, all released
    /// after). A test holds the two writers to the same bytes for quotes in every state.
    ///
    /// With `requestFrom`, the bytes of that part for a quote with the same request, the part
    /// is copied rather than written again: a submission publishes its quote twice
    /// (submitted, then priced), with the same request.
    mutating func quote(_ quote: Quote, currency: Currency, requestFrom shared: ArraySlice<UInt8>?) -> Range<Int> {
        var pricing: Pricing?
        var assignment: Assignment?
        var receipt: Receipt?
        var reasons: [PendingReason] = []
        var cancelledFrom: QuoteStatus?
        var waiting: (since: Date, mechanic: Mechanic?)?
        switch quote.stage {
        case .submitted: break
        case .pending(let pending): reasons = pending
        case .ready(let priced): pricing = priced
        case .booked(let priced, let assigned): (pricing, assignment) = (priced, assigned)
        case .completed(let priced, let assigned, let issued):
            (pricing, assignment, receipt) = (priced, assigned, issued)
        case .cancelled(let from, _): cancelledFrom = from
        case .waiting(let priced, let since, let mechanic): (pricing, waiting) = (priced, (since, mechanic))
        }
        let request = quote.request
        beginObject()
        field("id", quote.id.rawValue)
        field("state", quote.status.rawValue)
        field("message", quote.customerMessage)
        let requestStart = position
        if let shared {
            splice(shared)
        } else {
            key("customer")
            customer(request.customer)
            key("car")
            car(request.car)
            key("services")
            beginArray()
            for service in request.services {
                line(name: service.name, priceCents: service.listed?.price.cents)
            }
            endArray()
            field("preferredMechanic", request.preferredMechanic?.name)
            field("coupon", request.coupon?.code)
        }
        let requestPart = requestStart..<position
        field("currency", (pricing?.total.currency ?? currency).code)
        if let pricing {
            field("priceCents", pricing.total.cents)
            field("price", pricing.total.formatted)
            field("discountCents", pricing.discount.cents)
            field("manualPrice", pricing.isManual)
        }
        if let assignment {
            key("mechanic")
            mechanic(
                id: assignment.mechanic.id.rawValue, name: assignment.mechanic.name,
                skill: assignment.mechanic.skill.name)
        }
        if let receipt {
            key("receipt")
            beginObject()
            key("lines")
            beginArray()
            for item in receipt.lines {
                line(name: item.service, priceCents: item.price.cents)
            }
            endArray()
            field("subtotalCents", receipt.subtotal.cents)
            field("coupon", receipt.coupon)
            field("discountCents", receipt.discount.cents)
            field("totalCents", receipt.total.cents)
            field("total", receipt.total.formatted)
            key("mechanic")
            mechanic(id: receipt.mechanic.id.rawValue, name: receipt.mechanic.name, skill: receipt.mechanic.skill.name)
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
            if let mechanic = waiting.mechanic {
                key("waitingFor")
                self.mechanic(id: mechanic.id.rawValue, name: mechanic.name, skill: mechanic.skill.name)
            }
            field("waitingSince", waiting.since)
        }
        field("submittedAt", quote.submittedAt)
        field("updatedAt", quote.updatedAt)
        field("submittedBy", quote.submittedBy)
        endObject()
        return requestPart
    }
}
