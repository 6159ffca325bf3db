package import Foundation
import QuoteCore
package import QuoteStore

/// A quote's history as stored in its own row (`quotes.history`): a version byte (1), then
/// one fixed-size entry per step, oldest first. A transition appends its entry to the bytes it
/// read with the quote, without decoding them. Times are whole milliseconds (``StoredTime``),
/// so that what is read back is exactly what was written.
///
/// The row, not a table of steps: the quote row is rewritten at every transition anyway,
/// whereas a step row would be one more page written at a random place in another B-tree.
///
/// Entry (18 bytes): the from-state's code (0: none), the to-state's code, then the event's
/// sequence number and the time in milliseconds since 1970, each a little-endian `Int64`.
/// State codes are fixed here, never taken from `QuoteStatus`'s case order.
package enum HistoryCodec {
    package static let version: UInt8 = 1
    package static let entrySize = 18

    /// `history` with `steps` appended (an empty `history` gets its version byte first).
    package static func appending(_ steps: [StateChange], to history: some ContiguousBytes) -> [UInt8] {
        // Written in place into one allocation, not appended byte by byte.
        history.withUnsafeBytes { history in
            let start = history.isEmpty ? 1 : history.count
            let size = start + steps.count * entrySize
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                let buffer = UnsafeMutableRawBufferPointer(buffer)
                if history.isEmpty {
                    buffer[0] = version
                } else {
                    buffer.copyMemory(from: history)
                }
                write(steps, into: buffer, at: start)
                count = size
            }
        }
    }

    /// Writes `steps`' entries into `buffer` from `start` on.
    private static func write(_ steps: [StateChange], into buffer: UnsafeMutableRawBufferPointer, at start: Int) {
        var offset = start
        for step in steps {
            buffer[offset] = code(step.from)
            buffer[offset + 1] = code(step.to)
            buffer.storeBytes(of: step.seq.littleEndian, toByteOffset: offset + 2, as: Int64.self)
            buffer.storeBytes(
                of: StoredTime.milliseconds(step.at).littleEndian, toByteOffset: offset + 10, as: Int64.self)
            offset += entrySize
        }
    }

    /// The steps in `data`, oldest first; an empty `data` has none.
    package static func decode(_ data: some ContiguousBytes) throws -> [StateChange] {
        try data.withUnsafeBytes { buffer in
            guard !buffer.isEmpty else { return [] }
            guard buffer[0] == version else {
                throw QuoteCodec.CorruptRecord(
                    description: "stored history has version \(buffer[0]), expected \(version)")
            }
            guard (buffer.count - 1) % entrySize == 0 else {
                throw QuoteCodec.CorruptRecord(description: "stored history of \(buffer.count) bytes is truncated")
            }
            return try stride(from: 1, to: buffer.count, by: entrySize).map { offset in
                guard let to = try status(buffer[offset + 1]) else {
                    throw QuoteCodec.CorruptRecord(description: "stored history step has no state")
                }
                let milliseconds = Int64(
                    littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 10, as: Int64.self))
                guard StoredTime.range.contains(milliseconds) else {
                    throw QuoteCodec.CorruptRecord(description: "stored history step has time \(milliseconds) ms")
                }
                return StateChange(
                    from: try status(buffer[offset]), to: to, at: StoredTime.date(milliseconds),
                    seq: Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset + 2, as: Int64.self)))
            }
        }
    }

    static func code(_ status: QuoteStatus?) -> UInt8 {
        switch status {
        case nil: 0
        case .submitted: 1
        case .pending: 2
        case .ready: 3
        case .booked: 4
        case .completed: 5
        case .cancelled: 6
        case .waiting: 7
        }
    }

    static func status(_ code: UInt8) throws -> QuoteStatus? {
        switch code {
        case 0: nil
        case 1: .submitted
        case 2: .pending
        case 3: .ready
        case 4: .booked
        case 5: .completed
        case 6: .cancelled
        case 7: .waiting
        default: throw QuoteCodec.CorruptRecord(description: "stored history has unknown state code \(code)")
        }
    }
}
