package import Foundation
package import QuoteCore
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

    /// The most steps a row keeps: a quote's first, and its latest. One changed more often (a
    /// booking reassigned over and over) loses the steps between, so that its row, the work
    /// of each transition and a `get`'s reply stay bounded; the event log has every change.
    package static let maximumSteps = 1_024

    /// `history` with `steps` appended (an empty `history` gets its version byte first); past
    /// ``maximumSteps``, the first step and the latest.
    package static func appending(_ steps: [StateChange], to history: some ContiguousBytes) -> [UInt8] {
        // Written in place into scratch memory, not appended byte by byte, then copied into
        // the array (see ``submission(pricedTo:at:submittedSeq:pricedSeq:)``).
        history.withUnsafeBytes { history in
            let kept = history.isEmpty ? 0 : (history.count - 1) / entrySize
            guard kept + steps.count > maximumSteps else {
                let start = history.isEmpty ? 1 : history.count
                return withUnsafeTemporaryAllocation(byteCount: start + steps.count * entrySize, alignment: 1) {
                    buffer in
                    if history.isEmpty {
                        buffer[0] = version
                    } else {
                        buffer.copyMemory(from: history)
                    }
                    write(steps[...], into: buffer, at: start)
                    return [UInt8](buffer)
                }
            }
            return bounded(appending: steps, to: history, kept: kept)
        }
    }

    /// A new quote's history: its two first steps
    /// (`StateChange.submissionSteps(pricedTo:at:submittedSeq:pricedSeq:)`), written on the
    /// stack, then copied into the array. (An array made with room to fill in place looks
    /// up its storage's type at run time: dearer than the copy.)
    package static func submission(
        pricedTo status: QuoteStatus, at: Date, submittedSeq: Int64, pricedSeq: Int64
    ) -> [UInt8] {
        let steps = StateChange.submissionSteps(
            pricedTo: status, at: at, submittedSeq: submittedSeq, pricedSeq: pricedSeq)
        return withUnsafeTemporaryAllocation(byteCount: 1 + 2 * entrySize, alignment: 1) { buffer in
            buffer[0] = version
            write(steps.submitted, into: buffer, at: 1)
            write(steps.priced, into: buffer, at: 1 + entrySize)
            return [UInt8](buffer)
        }
    }

    /// ``maximumSteps`` entries: the first of `history` and `steps`, then the latest.
    private static func bounded(
        appending steps: [StateChange], to history: UnsafeRawBufferPointer, kept: Int
    ) -> [UInt8] {
        let latest = maximumSteps - 1
        let newSteps = min(steps.count, latest)
        let oldSteps = latest - newSteps
        let size = 1 + maximumSteps * entrySize
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            let buffer = UnsafeMutableRawBufferPointer(buffer)
            buffer[0] = version
            var offset = 1
            if kept > 0 {
                // The row's first step, then its latest that still fit.
                let from = 1 + (kept - oldSteps) * entrySize
                UnsafeMutableRawBufferPointer(rebasing: buffer[1...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: history[1..<(1 + entrySize)]))
                UnsafeMutableRawBufferPointer(rebasing: buffer[(1 + entrySize)...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: history[from..<(from + oldSteps * entrySize)]))
                offset = 1 + (1 + oldSteps) * entrySize
            } else {
                write(steps[..<1], into: buffer, at: 1)
                offset = 1 + entrySize
            }
            write(steps.suffix(newSteps), into: buffer, at: offset)
            count = size
        }
    }

    /// Writes `steps`' entries into `buffer` from `start` on.
    private static func write(
        _ steps: ArraySlice<StateChange>, into buffer: UnsafeMutableRawBufferPointer, at start: Int
    ) {
        var offset = start
        for step in steps {
            write(step, into: buffer, at: offset)
            offset += entrySize
        }
    }

    /// Writes `step`'s entry into `buffer` at `offset`.
    private static func write(_ step: StateChange, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) {
        buffer[offset] = code(step.from)
        buffer[offset + 1] = code(step.to)
        buffer.storeBytes(of: step.seq.littleEndian, toByteOffset: offset + 2, as: Int64.self)
        buffer.storeBytes(of: StoredTime.milliseconds(step.at).littleEndian, toByteOffset: offset + 10, as: Int64.self)
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
