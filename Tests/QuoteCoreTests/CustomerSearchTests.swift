import QuoteCore
import Testing

@Suite("A customer's search key")
struct CustomerSearchTests {
    @Test(
        "is the text lowercased, whether it is ASCII or not, short or long",
        arguments: [
            "", "jane@example.com", "Jane@Example.COM", "a-very-long-address.with.dots@subdomain.example.org",
            "A-VERY-LONG-ADDRESS.WITH.DOTS@SUBDOMAIN.EXAMPLE.ORG", "Zoë Ångström", "ÉLODIE@EXEMPLE.FR", "İstanbul",
            "[@]^_`{|}~", "Bob Jones 42",
        ])
    func isTheTextLowercased(_ text: String) {
        #expect(CustomerSearch.key(text) == text.lowercased())
        #expect(Array(CustomerSearch.key(text).utf8) == Array(text.lowercased().utf8))
    }

    @Test("is the text lowercased for every ASCII byte, and a byte beyond it, at every place of a text up to 20 bytes")
    func everyByteAtEveryPlace() {
        for length in 1...20 {
            for index in 0..<length {
                for byte in UInt8(0)..<0x80 {
                    var bytes = Array(repeating: UInt8(ascii: "Q"), count: length)
                    bytes[index] = byte
                    let text = String(decoding: bytes, as: UTF8.self)
                    #expect(CustomerSearch.key(text) == text.lowercased(), "\(length), \(index), \(byte)")
                }
                var characters = Array(String(repeating: "Q", count: length))
                characters[index] = "Ö"
                let beyond = String(characters)
                #expect(CustomerSearch.key(beyond) == beyond.lowercased(), "\(length), \(index)")
            }
        }
    }

    @Test("an address is found by its key whatever the case it is searched in")
    func searchFoldsCase() {
        #expect(CustomerSearch("JANE@Example.com") == .email("jane@example.com"))
        #expect(CustomerSearch("Zoë Å") == .namePrefix("zoë å"))
    }
}
