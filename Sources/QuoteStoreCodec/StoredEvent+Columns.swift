package import Foundation
package import QuoteCore
package import QuoteStore

extension StoredEvent.Kind {
    /// The kind of the event stored with `type` (the database's discriminator) and `data`
    /// for `quote`, whose state before was `from`. Throws `QuoteCodec.CorruptRecord` (or a
    /// decoding error) for data that does not read back. A quote event takes `decoded`, when
    /// given, as what its `data` decodes to.
    package init(type: String, from: String?, data: Data, quote: QuoteID, decoded: Quote? = nil) throws {
        switch type {
        case "mechanic.busy": self = .mechanicBusy(try QuoteCodec.decodeMechanic(data), quote: quote)
        case "mechanic.free": self = .mechanicFree(try QuoteCodec.decodeMechanic(data), quote: quote)
        case "mechanic.on_duty": self = .mechanicDuty(try QuoteCodec.decodeMechanic(data), onDuty: true)
        case "mechanic.off_duty": self = .mechanicDuty(try QuoteCodec.decodeMechanic(data), onDuty: false)
        case "mechanic.added": self = .roster(try QuoteCodec.decodeMechanic(data), change: .added)
        case "mechanic.retired": self = .roster(try QuoteCodec.decodeMechanic(data), change: .retired)
        case "mechanic.updated":
            let (mechanic, previous) = try QuoteCodec.decodeSkillChange(data)
            self = .roster(mechanic, change: .updated(from: previous))
        case "catalog.applied": self = .catalogApplied(version: try QuoteCodec.decodeNumber(data))
        case "quote.reassigned":
            let (mechanic, quote) = try QuoteCodec.decodeReassignment(data)
            self = .quoteReassigned(from: mechanic, quote: quote)
        default:
            self = .quote(
                from: from.flatMap(QuoteStatus.init(rawValue:)), quote: try decoded ?? QuoteCodec.decodeQuote(data))
        }
    }

    /// The `quote_id` column of an event that concerns no quote (a change of duty, roster or
    /// catalog): quote ids
    /// start at 1.
    package static let noQuote: Int64 = 0

    /// The columns both stores write for this kind: the mechanic concerned, the quote's
    /// states before and after, and the record.
    package var columns: (mechanic: MechanicID?, from: QuoteStatus?, to: QuoteStatus?, data: [UInt8]) {
        switch self {
        case .quote(let previous, let quote):
            (quote.mechanic?.id, previous, quote.status, QuoteCodec.encode(quote))
        case .mechanicBusy(let worker, _), .mechanicFree(let worker, _), .mechanicDuty(let worker, _):
            (worker.id, nil, nil, QuoteCodec.encode(worker))
        case .quoteReassigned(let from, let quote):
            (quote.mechanic?.id, .booked, quote.status, QuoteCodec.encode(quote, reassignedFrom: from))
        case .roster(let worker, .updated(let previous)):
            (worker.id, nil, nil, QuoteCodec.encode(worker, previousSkill: previous))
        case .roster(let worker, _): (worker.id, nil, nil, QuoteCodec.encode(worker))
        case .catalogApplied(let version): (nil, nil, nil, QuoteCodec.encode(number: version))
        }
    }
}
