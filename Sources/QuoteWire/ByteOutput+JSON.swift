import Bytes

extension ByteOutput {
    /// `,"name":` (without the comma when `comma` is false), making room once.
    @inline(__always) mutating func appendKey(_ name: StaticString, comma: Bool) {
        let length = name.utf8CodeUnitCount
        write(upTo: length + 4) { target in
            var index = 0
            if comma {
                target[0] = UInt8(ascii: ",")
                index = 1
            }
            target[index] = UInt8(ascii: "\"")
            index += 1
            ByteOutput.copy(name.utf8Start, to: target + index, count: length)
            index += length
            target[index] = UInt8(ascii: "\"")
            target[index + 1] = UInt8(ascii: ":")
            return index + 2
        }
    }
}
