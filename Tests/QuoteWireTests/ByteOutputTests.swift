import Bytes
import Testing

@Suite("The byte output writers append to")
struct ByteOutputTests {
    @Test("appends of every length, across many growths, keep every byte in order")
    func appendsKeepEveryByte() {
        var output = ByteOutput(capacity: 1)
        var expected: [UInt8] = []
        for length in 0...40 {
            let chunk = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
            chunk.withUnsafeBytes { output.append($0) }
            expected += chunk
            output.append(UInt8(length))
            expected.append(UInt8(length))
            output.append(0xFE, 0xFF)
            expected += [0xFE, 0xFF]
        }
        output.append("done")
        expected += Array("done".utf8)
        #expect(output.array == expected)
        #expect(output.count == expected.count)
        #expect(Array(output.bytes(from: expected.count - 4)) == Array("done".utf8))
    }

    @Test(
        "numbers are written in decimal, fixed widths zero-padded",
        arguments: [
            0, 7, 9, 10, 11, 42, 86, 99, 100, 101, 999, 1_000, 1_234_567, 1_357_924_680, 9_999_999_999, 10_000_000_000,
            9_999_999_999_999_999_999, 10_000_000_000_000_000_000, UInt64.max - 1, UInt64.max,
        ])
    func digits(_ value: UInt64) {
        var output = ByteOutput(capacity: 4)
        output.appendDigits(value)
        output.appendFixed(value, width: 3)
        let text = String(value)
        let fixed = String(repeating: "0", count: max(0, 3 - text.count)) + text.suffix(3)
        #expect(String(decoding: output.array, as: UTF8.self) == text + fixed)
    }

    @Test("every power of ten, and the numbers either side of it, is written with all its digits")
    func digitsAroundPowersOfTen() {
        var power: UInt64 = 1
        for exponent in 0..<20 {
            for value in [power - 1, power, power + 1] {
                var output = ByteOutput(capacity: 4)
                output.appendDigits(value)
                #expect(String(decoding: output.array, as: UTF8.self) == String(value), "10^\(exponent)")
            }
            if exponent < 19 { power *= 10 }
        }
        for bits in 0..<64 {
            let value = UInt64(1) << UInt64(bits)
            for candidate in [value - 1, value, value + 1] {
                var output = ByteOutput(capacity: 4)
                output.appendDigits(candidate)
                #expect(String(decoding: output.array, as: UTF8.self) == String(candidate), "2^\(bits)")
            }
        }
    }

    @Test("a writer in place gets the room it asked for, and no more than that is kept")
    func writeInPlace() {
        var output = ByteOutput(capacity: 64)
        output.write(upTo: 3) { target in
            target[0] = 1
            target[1] = 2
            return 2
        }
        output.write(upTo: 2) { target in
            target[0] = 3
            target[1] = 4
            return 5
        }
        output.write(upTo: 1) { _ in -1 }
        #expect(output.array == [1, 2, 3, 4])
    }
}
