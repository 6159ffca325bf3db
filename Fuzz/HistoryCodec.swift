// Fuzz target `history-codec`: a stored quote history, as the stores read one back. Any bytes
// must decode or throw, never trap; what decodes is exactly what encoding its steps writes,
// all at once or one step at a time.
import Foundation
import QuoteStoreCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let history = Array(UnsafeBufferPointer(start: data, count: size))
    guard let steps = try? HistoryCodec.decode(history) else { return 0 }
    guard history.isEmpty || HistoryCodec.appending(steps, to: [UInt8]()) == history else {
        fatalError("a decoded history encodes to other bytes")
    }
    let stepwise = steps.reduce(HistoryCodec.appending([], to: [UInt8]())) { history, step in
        HistoryCodec.appending([step], to: history)
    }
    guard history.isEmpty || stepwise == history else {
        fatalError("a decoded history appended step by step encodes to other bytes")
    }
    return 0
}
