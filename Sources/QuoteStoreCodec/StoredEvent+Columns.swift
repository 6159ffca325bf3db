package import Foundation
package import QuoteCore
package import QuoteStore

extension StoredEvent.Kind {
    /// The kind of the event stored with `type` (the database's discriminator) and `data`
    /// for `quote`, whose state before was `from`. Throws `QuoteCodec.CorruptRecord` (or a
    /// decoding error) for data that does not read back.
    package init(type: String, from: String?, data: Data, quote: QuoteID) throws {
        switch type {
        case "mechanic.busy": self = .mechanicBusy(try QuoteCodec.decodeMechanic(data), quote: quote)
        case "mechanic.free": self = .mechanicFree(try QuoteCodec.decodeMechanic(data), quote: quote)
        default: self = .quote(from: from.flatMap(QuoteStatus.init(rawValue:)), quote: try QuoteCodec.decodeQuote(data))
        }
    }
}
