// Fuzz target `quote-codec`: a stored quote or mechanic record, as the stores read one back.
// Any bytes must decode or throw, never trap; what decodes must encode to a record that reads
// back and encodes the same again.
import Foundation
import QuoteCore
import QuoteStoreCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let record = Data(bytes: data, count: size)
    if let quote = try? QuoteCodec.decodeQuote(record) {
        let encoded = QuoteCodec.encode(quote)
        let again: Quote
        do {
            again = try QuoteCodec.decodeQuote(encoded)
        } catch {
            fatalError("an encoded quote does not read back: \(error)")
        }
        guard QuoteCodec.encode(again) == encoded else { fatalError("an encoded quote reads back different") }
    }
    if let mechanic = try? QuoteCodec.decodeMechanic(record) {
        let encoded = QuoteCodec.encode(mechanic)
        guard (try? QuoteCodec.decodeMechanic(encoded)).map(QuoteCodec.encode) == encoded else {
            fatalError("an encoded mechanic reads back different")
        }
    }
    return 0
}
