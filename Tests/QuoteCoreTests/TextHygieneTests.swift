import Testing

@testable import QuoteCore

@Suite("Text that counts as missing, and text with nothing to trim")
struct TextHygieneTests {
    /// Texts at the edges of the two-byte test: every ASCII byte at either end, spaces and
    /// invisible characters around visible ones, text beyond ASCII, one byte and none.
    static let texts: [String] = {
        var texts = [
            "", "a", "ab", " a", "a ", "\ta\n", "\r\na", "é", "aé", "éa", "a\u{200B}", "\u{200B}a", "\u{3000}", "  ",
        ]
        for byte in UInt8(0)..<0x80 {
            let character = String(decoding: [byte], as: UTF8.self)
            texts += [character, character + "x", "x" + character, character + "x" + character]
        }
        return texts
    }()

    @Test(
        "visible ASCII at both ends means neither blank nor trimmed, and otherwise the full checks decide",
        arguments: texts)
    func visibleEndsDecideBoth(text: String) {
        if text.hasVisibleASCIIEnds {
            #expect(!text.isBlank)
            #expect(text.trimmingPrefixAndSuffixSpaces() == text)
        } else {
            // Whatever else holds, the ends are not both visible ASCII.
            let bytes = Array(text.utf8)
            let visible = { (byte: UInt8) in byte > 0x20 && byte < 0x7F }
            #expect(bytes.isEmpty || !visible(bytes[0]) || !visible(bytes[bytes.count - 1]))
        }
    }

    @Test("a submission's fields with spaces around them are trimmed, and a blank trim is dropped")
    func spacesAroundFieldsAreTrimmed() throws {
        let submission = Submission(
            customer: .init(name: " Reza ", email: "reza@example.com ", address: "\t1 Main St"),
            car: .init(make: "Honda ", model: " Civic", year: 2019, trim: " \t "),
            services: [" Oil Change\n", "Brake Inspection"])
        let request = try QuoteBuilder(submission).build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.customer.name == "Reza")
        #expect(request.customer.email == "reza@example.com")
        #expect(request.customer.address == "1 Main St")
        #expect(request.car.make == "Honda")
        #expect(request.car.model == "Civic")
        #expect(request.car.trim == nil)
        #expect(request.services.map(\.name) == ["Oil Change", "Brake Inspection"])
        #expect(request.services.allSatisfy { $0.listed != nil })
    }
}
