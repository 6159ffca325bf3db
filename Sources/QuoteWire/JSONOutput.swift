/// The writer's bytes: one allocation, grown by doubling, written through a pointer.
struct JSONOutput: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// The bytes from `start` on, valid until the next write.
    func bytes(from start: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + start, count: count - start)
    }

    @inline(__always) private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    @inline(__always) mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always) mutating func append(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count + 1] = second
        count += 2
    }

    @inline(__always) mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        reserve(length)
        if let source = bytes.baseAddress { Self.copy(source, to: base + count, count: length) }
        count += length
    }

    /// Copies `length` bytes. Up to 16 (keys, numbers, short names), in two overlapping
    /// unaligned words: a call to memcpy, or a loop a byte at a time, costs more than the
    /// bytes.
    @inline(__always) private static func copy(
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

    @inline(__always) mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `,"name":` (without the comma when `comma` is false), checking for room once.
    @inline(__always) mutating func appendKey(_ name: StaticString, comma: Bool) {
        let length = name.utf8CodeUnitCount
        reserve(length + 4)
        var index = count
        if comma {
            base[index] = UInt8(ascii: ",")
            index += 1
        }
        base[index] = UInt8(ascii: "\"")
        index += 1
        Self.copy(name.utf8Start, to: base + index, count: length)
        index += length
        base[index] = UInt8(ascii: "\"")
        base[index + 1] = UInt8(ascii: ":")
        count = index + 2
    }

    /// `value` in decimal, most significant digit first.
    mutating func appendDigits(_ value: UInt64) {
        reserve(20)
        var remaining = value
        var end = count
        repeat {
            base[end] = 48 + UInt8(remaining % 10)
            remaining /= 10
            end += 1
        } while remaining > 0
        // Written least significant first: turn them around in place.
        var (low, high) = (count, end - 1)
        while low < high {
            (base[low], base[high]) = (base[high], base[low])
            low += 1
            high -= 1
        }
        count = end
    }

    /// The last `width` decimal digits of `value`, zero-padded.
    @inline(__always) mutating func appendFixed(_ value: UInt64, width: Int) {
        reserve(width)
        var remaining = value
        var index = count + width - 1
        while index >= count {
            base[index] = 48 + UInt8(remaining % 10)
            remaining /= 10
            index -= 1
        }
        count += width
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }
}
