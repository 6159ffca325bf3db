/// The last date a codec's writers wrote, as its JSON: every quote and event of a batch
/// carries the batch's time, so a date is formatted once per batch rather than once per
/// quote. Not thread-safe: one per ``WireCodec``, one codec per thread.
final class DateCache {
    /// The milliseconds, then the text's length and bytes (a date's JSON is 26 bytes, or a
    /// few more for years beyond four digits, which are not cached). Raw memory rather than
    /// stored `var`s, which would pay a runtime exclusivity check on every access.
    private let storage = UnsafeMutableRawPointer.allocate(byteCount: 48, alignment: 8)
    private static let capacity = 39

    init() { storage.storeBytes(of: Int64.min, as: Int64.self) }

    deinit { storage.deallocate() }

    /// The text of `milliseconds`, if it is the last date remembered.
    func text(_ milliseconds: Int64) -> UnsafeRawBufferPointer? {
        guard storage.load(as: Int64.self) == milliseconds else { return nil }
        return UnsafeRawBufferPointer(start: storage + 9, count: Int(storage.load(fromByteOffset: 8, as: UInt8.self)))
    }

    func remember(_ milliseconds: Int64, _ text: UnsafeRawBufferPointer) {
        guard text.count <= Self.capacity, let source = text.baseAddress else { return }
        storage.storeBytes(of: milliseconds, as: Int64.self)
        storage.storeBytes(of: UInt8(text.count), toByteOffset: 8, as: UInt8.self)
        (storage + 9).copyMemory(from: source, byteCount: text.count)
    }
}
