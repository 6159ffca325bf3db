/// The last two dates a codec's writers wrote, as their JSON: every quote and event of a
/// batch carries one of the batch's times (when its requests were read, when it committed),
/// so a date is formatted once or twice per batch rather than once per quote. A date is found
/// by its exact bits first (no arithmetic at all), then by its millisecond. Not thread-safe:
/// one per ``WireCodec``, one codec per thread.
final class DateCache {
    /// Two slots of 56 bytes, each the milliseconds, the bits of the `Date` last written for
    /// them, then the text's length (0: empty) and bytes (a date's JSON is 26 bytes, or a few
    /// more for years beyond four digits, which are not cached); then the slot written last.
    /// Raw memory rather than stored `var`s, which would pay a runtime exclusivity check on
    /// every access.
    private let storage = UnsafeMutableRawPointer.allocate(byteCount: 2 * slotSize + 8, alignment: 8)
    private static let slotSize = 56
    private static let capacity = 39
    private static let lengthOffset = 16
    private static let textOffset = 17

    init() { storage.initializeMemory(as: UInt8.self, repeating: 0, count: 2 * Self.slotSize + 8) }

    deinit { storage.deallocate() }

    /// The text of the date whose `timeIntervalSinceReferenceDate` has these `bits`, if it is
    /// one of the two remembered last.
    func text(bits: UInt64) -> UnsafeRawBufferPointer? {
        for slot in 0..<2 {
            let base = storage + slot * Self.slotSize
            let count = Int(base.load(fromByteOffset: Self.lengthOffset, as: UInt8.self))
            if count > 0 && base.load(fromByteOffset: 8, as: UInt64.self) == bits {
                return UnsafeRawBufferPointer(start: base + Self.textOffset, count: count)
            }
        }
        return nil
    }

    /// The text of `milliseconds`, if it is one of the two dates remembered last; a date of
    /// `bits` is then remembered beside it, so that the next one is found by its bits.
    func text(_ milliseconds: Int64, bits: UInt64) -> UnsafeRawBufferPointer? {
        for slot in 0..<2 {
            let base = storage + slot * Self.slotSize
            let count = Int(base.load(fromByteOffset: Self.lengthOffset, as: UInt8.self))
            guard count > 0 && base.load(as: Int64.self) == milliseconds else { continue }
            // The same millisecond reached by another `Date`: copied into the other slot.
            let other = storage + (1 - slot) * Self.slotSize
            other.copyMemory(from: base, byteCount: Self.slotSize)
            other.storeBytes(of: bits, toByteOffset: 8, as: UInt64.self)
            storage.storeBytes(of: 1 - slot, toByteOffset: 2 * Self.slotSize, as: Int.self)
            return UnsafeRawBufferPointer(start: base + Self.textOffset, count: count)
        }
        return nil
    }

    /// Remembers `text` for `milliseconds` and the date of `bits`, in place of the older of
    /// the two.
    func remember(_ milliseconds: Int64, bits: UInt64, _ text: UnsafeRawBufferPointer) {
        guard (1...Self.capacity).contains(text.count), let source = text.baseAddress else { return }
        let last = storage.load(fromByteOffset: 2 * Self.slotSize, as: Int.self)
        let slot = 1 - last
        let base = storage + slot * Self.slotSize
        base.storeBytes(of: milliseconds, as: Int64.self)
        base.storeBytes(of: bits, toByteOffset: 8, as: UInt64.self)
        base.storeBytes(of: UInt8(text.count), toByteOffset: Self.lengthOffset, as: UInt8.self)
        (base + Self.textOffset).copyMemory(from: source, byteCount: text.count)
        storage.storeBytes(of: slot, toByteOffset: 2 * Self.slotSize, as: Int.self)
    }
}
