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

    /// `"text"`, room made once, when no byte of `text` needs escaping in a JSON string (a
    /// quote, a backslash, a control character); else nothing is written and it returns
    /// false. Most text of a frame is plain: it is scanned and copied in one call.
    @inline(__always) mutating func appendPlainString(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = text.count
        guard TextScan.end(of: text, from: 0, beyondASCII: false) == length else { return false }
        write(upTo: length &+ 2) { target in
            target[0] = UInt8(ascii: "\"")
            if let source = text.baseAddress { ByteOutput.copy(source, to: target + 1, count: length) }
            target[length &+ 1] = UInt8(ascii: "\"")
            return length &+ 2
        }
        return true
    }
}
