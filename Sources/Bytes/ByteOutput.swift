/// A growable run of bytes for writers that make many small appends (the JSON writer, the
/// stored codecs): one allocation, grown by doubling, written through a pointer, with no
/// bounds check or copy-on-write test per byte. It is `~Copyable`, so its memory has one
/// owner and is freed exactly once.
///
/// Every member is inlinable: a writer's appends are the hot path of whoever uses it.
public struct ByteOutput: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var written = 0
    @usableFromInline var capacity: Int

    /// How many bytes were written.
    @inlinable public var count: Int { written }

    /// An empty output with room for `capacity` bytes (64 at least) before it grows.
    @inlinable public init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = Memory.allocate(self.capacity)
    }

    @inlinable deinit { Memory.free(base) }

    /// How many bytes it holds room for.
    @inlinable public var reservedCapacity: Int { capacity }

    /// Forgets what was written, keeping the room, and makes room for `minimum` bytes.
    @inlinable public mutating func removeAll(keepingCapacity minimum: Int) {
        written = 0
        reserve(minimum)
    }

    /// The bytes written, copied into an array.
    @inlinable public var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: written)) }

    /// The bytes from `start` on, valid until the next write.
    @inlinable public func bytes(from start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: written - start)
    }

    /// Calls `body` with the bytes written, valid only during the call.
    @inlinable public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
    {
        try body(UnsafeRawBufferPointer(start: base, count: written))
    }

    @inlinable @inline(__always) mutating func reserve(_ extra: Int) {
        if written &+ extra > capacity { grow(to: written + extra) }
    }

    @inlinable mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        base = Memory.reallocate(base, to: newCapacity, keeping: written)
        capacity = newCapacity
    }

    /// Lets `body` write up to `maximum` bytes at the end in place, room made once; `body`
    /// returns how many it wrote, which must not be more than `maximum`.
    @inlinable @inline(__always) public mutating func write(
        upTo maximum: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int
    ) {
        reserve(maximum)
        let added = body(base + written)
        written += min(max(added, 0), maximum)
    }

    @inlinable @inline(__always) public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[written] = byte
        written += 1
    }

    @inlinable @inline(__always) public mutating func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[written] = first
        base[written + 1] = second
        written += 2
    }

    @inlinable @inline(__always) public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        reserve(length)
        if let source = bytes.baseAddress { Self.copy(source, to: base + written, count: length) }
        written += length
    }

    @inlinable @inline(__always) public mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Copies `length` bytes. Up to 16 (keys, numbers, short names), in two overlapping
    /// unaligned words: a call to memcpy, or a loop a byte at a time, costs more than the
    /// bytes.
    @inlinable @inline(__always) public static func copy(
        _ source: UnsafeRawPointer, to target: UnsafeMutablePointer<UInt8>, count length: Int
    ) {
        let target = UnsafeMutableRawPointer(target)
        if length > 16 {
            target.copyMemory(from: source, byteCount: length)
        } else if length >= 8 {
            let tail = length &- 8
            target.storeBytes(of: source.loadUnaligned(as: UInt64.self), as: UInt64.self)
            target.storeBytes(
                of: source.loadUnaligned(fromByteOffset: tail, as: UInt64.self), toByteOffset: tail, as: UInt64.self)
        } else if length >= 4 {
            let tail = length &- 4
            target.storeBytes(of: source.loadUnaligned(as: UInt32.self), as: UInt32.self)
            target.storeBytes(
                of: source.loadUnaligned(fromByteOffset: tail, as: UInt32.self), toByteOffset: tail, as: UInt32.self)
        } else {
            for index in 0..<length {
                target.storeBytes(
                    of: source.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index, as: UInt8.self)
            }
        }
    }

    /// `value` in decimal, most significant digit first: its length counted first, then
    /// written from the last digit back, two digits for each division (numbers are in
    /// every frame: ids, amounts, sequence numbers).
    @inlinable public mutating func appendDigits(_ value: UInt64) {
        let length = Self.decimalLength(value)
        reserve(length)
        let pairs = Self.digitPairs.utf8Start
        var remaining = value
        var end = written + length
        while remaining >= 100 {
            let pair = Int(truncatingIfNeeded: remaining % 100) &* 2
            remaining /= 100
            end -= 2
            base[end] = pairs[pair]
            base[end + 1] = pairs[pair &+ 1]
        }
        if remaining >= 10 {
            let pair = Int(truncatingIfNeeded: remaining) &* 2
            base[end - 2] = pairs[pair]
            base[end - 1] = pairs[pair &+ 1]
        } else {
            base[end - 1] = 48 + UInt8(truncatingIfNeeded: remaining)
        }
        written += length
    }

    /// How many decimal digits `value` has (1 for 0): estimated from its bit length
    /// (log10 2 is about 1233/4096), then corrected by one comparison with a power of ten,
    /// rather than compared with each in turn.
    @inlinable static func decimalLength(_ value: UInt64) -> Int {
        // `| 1`: 0 has one digit, and no even number is one below a power of ten.
        let odd = value | 1
        let estimate = ((64 &- odd.leadingZeroBitCount) &* 1_233) &>> 12
        return odd >= powerOfTen(estimate) ? estimate &+ 1 : estimate
    }

    /// 10 to the power `exponent`, 0 to 19 (every power of ten a `UInt64` holds): constants,
    /// not a table that would be initialized lazily and checked at every use.
    @inlinable static func powerOfTen(_ exponent: Int) -> UInt64 {
        switch exponent {
        case 0: 1
        case 1: 10
        case 2: 100
        case 3: 1_000
        case 4: 10_000
        case 5: 100_000
        case 6: 1_000_000
        case 7: 10_000_000
        case 8: 100_000_000
        case 9: 1_000_000_000
        case 10: 10_000_000_000
        case 11: 100_000_000_000
        case 12: 1_000_000_000_000
        case 13: 10_000_000_000_000
        case 14: 100_000_000_000_000
        case 15: 1_000_000_000_000_000
        case 16: 10_000_000_000_000_000
        case 17: 100_000_000_000_000_000
        case 18: 1_000_000_000_000_000_000
        default: 10_000_000_000_000_000_000
        }
    }

    /// The two digits of every number below 100, in order: one load for two digits, not a
    /// division each.
    @usableFromInline static var digitPairs: StaticString {
        """
        0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
        5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
        """
    }

    /// `value` in seven-bit groups, least significant first, the high bit set on all but the
    /// last (unsigned LEB128): one to ten bytes.
    @inlinable public mutating func appendLEB128(_ value: UInt64) {
        reserve(10)
        var value = value
        while value >= 0x80 {
            base[written] = UInt8(truncatingIfNeeded: value) | 0x80
            written += 1
            value >>= 7
        }
        base[written] = UInt8(value)
        written += 1
    }

    /// The last `width` decimal digits of `value`, zero-padded.
    @inlinable @inline(__always) public mutating func appendFixed(_ value: UInt64, width: Int) {
        reserve(width)
        var remaining = value
        var index = written + width - 1
        while index >= written {
            base[index] = 48 + UInt8(remaining % 10)
            remaining /= 10
            index -= 1
        }
        written += width
    }
}
