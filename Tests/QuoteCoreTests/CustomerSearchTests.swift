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

    @Test("an address is found by its key whatever the case it is searched in")
    func searchFoldsCase() {
        #expect(CustomerSearch("JANE@Example.com") == .email("jane@example.com"))
        #expect(CustomerSearch("Zoë Å") == .namePrefix("zoë å"))
    }
}
