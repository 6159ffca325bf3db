import Testing

@testable import QuoteWire

@Suite("Matching a request's keys to the protocol's fields")
struct RequestKeyTests {
    /// The fields and the first unknown key of a frame `{"<key>": null}`, as the parser reads it.
    private static func presence(ofKey key: String) -> WireRequest.Presence? {
        guard case .success(let request) = RequestParser.parse(Array("{\"\(key)\":null}".utf8)) else { return nil }
        return request.presence
    }

    @Test(
        "each operation's name, plain or escaped, reads as that operation; a near name as the text it is",
        arguments: Operation.allCases)
    func eachOperationName(operation: Operation) throws {
        let name = operation.rawValue
        let first = try #require(name.unicodeScalars.first)
        let escaped = "\\u00" + String(first.value, radix: 16) + name.dropFirst()
        for spelled in [name, escaped] {
            guard case .success(let request) = RequestParser.parse(Array("{\"op\":\"\(spelled)\"}".utf8)) else {
                Issue.record("\(spelled) did not parse")
                continue
            }
            #expect(request.op == name && request.op.flatMap(Operation.init(rawValue:)) == operation)
        }
        for near in [name + "s", String(name.dropLast()), name.uppercased(), " " + name] {
            guard case .success(let request) = RequestParser.parse(Array("{\"op\":\"\(near)\"}".utf8)) else {
                Issue.record("\(near) did not parse")
                continue
            }
            #expect(request.op == near && Operation(rawValue: near) == nil)
        }
    }

    @Test("every name fits in the two words a key is compared by")
    func namesFitTheWords() {
        #expect(WireRequest.Fields.names.allSatisfy { $0.name.utf8CodeUnitCount <= 16 })
    }

    @Test(
        "each field's name, plain or escaped, is matched to that field and to no other",
        arguments: WireRequest.Fields.names.map { $0.name.description })
    func eachNameIsItsField(name: String) throws {
        let field = try #require(WireRequest.Fields(name: name))
        #expect(Self.presence(ofKey: name)?.fields == field)
        #expect(Self.presence(ofKey: name)?.unknown == nil)
        // The same key with its first letter escaped goes through the decoded path.
        let first = try #require(name.unicodeScalars.first)
        let escaped = "\\u00" + String(first.value, radix: 16) + name.dropFirst()
        #expect(Self.presence(ofKey: escaped)?.fields == field)
    }

    @Test(
        "a key that differs from a name in any one byte, or is longer or shorter, is unknown",
        arguments: WireRequest.Fields.names.map { $0.name.description })
    func nearMissesAreUnknown(name: String) {
        var keys = [name + "x", String(name.dropLast()), name.uppercased(), name + String(repeating: "y", count: 20)]
        for index in name.utf8.indices {
            var bytes = Array(name.utf8)
            let offset = name.utf8.distance(from: name.utf8.startIndex, to: index)
            bytes[offset] = bytes[offset] == UInt8(ascii: "q") ? UInt8(ascii: "r") : UInt8(ascii: "q")
            keys.append(String(decoding: bytes, as: UTF8.self))
        }
        for key in keys where WireRequest.Fields(name: key) == nil {
            let presence = Self.presence(ofKey: key)
            #expect(presence?.fields == [], "\(key)")
            #expect(presence?.unknown == key, "\(key)")
        }
    }
}
