import Foundation
import QuoteCore
import Testing

@Suite("The catalog")
struct CatalogTests {
    @Test("the default catalog holds the articles' mechanics and services and WELCOME10")
    func standardCatalog() throws {
        let catalog = Catalog.standard
        #expect(catalog.services.count == 11)
        #expect(catalog.mechanics.count == 10)
        #expect(catalog.mechanic(named: "Joe Murphy")?.skill == .master)
        #expect(catalog.mechanic(named: "mike fulton")?.skill == .junior)
        #expect(catalog.service(named: "Timing Belt Replacement")?.minimumSkill == .master)
        #expect(catalog.service(named: "brake pad replacement")?.price == Money(cents: 8_900))
        let coupon = try #require(catalog.coupon(code: "welcome10"))
        #expect(coupon.discount == .percent(10))
        #expect(coupon.expiresAt == nil)
    }

    @Test("skills are ordered junior < apprentice < experienced < master")
    func skillOrder() {
        #expect(Skill.allCases.sorted() == [.junior, .apprentice, .experienced, .master])
        #expect(Skill(name: "Master") == .master)
        #expect(Skill(name: "wizard") == nil)
    }

    @Test(
        "a service is found by its name in any case, between any spaces",
        arguments: [
            ("Oil Change", "Oil Change"), ("oil change", "Oil Change"), ("  OIL CHANGE\t", "Oil Change"),
            ("Équilibrage", "Équilibrage"), ("ÉQUILIBRAGE", "Équilibrage"), (" équilibrage", "Équilibrage"),
            ("wash", "wash"), ("WASH", "wash"),
            // The ASCII neighbours of the capitals are kept as they are.
            ("@Z[`a{", "@z[`a{"), ("@z[`A{", "@z[`a{"),
        ])
    func serviceInAnyCase(asked: String, found: String) throws {
        let catalog = try CatalogDocument(
            currency: "EUR",
            services: [
                .init(name: "Oil Change", minimumSkill: "junior", price: "35.00"),
                .init(name: "Équilibrage", minimumSkill: "junior", price: "20.00"),
                .init(name: "wash", minimumSkill: "junior", price: "5.00"),
                .init(name: "@z[`a{", minimumSkill: "junior", price: "1.00"),
            ],
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")]
        ).catalog()
        #expect(catalog.service(named: asked)?.name == found)
        #expect(catalog.service(named: asked + "s") == nil)
    }

    @Test("the ASCII neighbours of the capitals are not folded: names differing only in them are different services")
    func capitalNeighbours() throws {
        let names = ["a@", "a`", "a[", "a{", "Z", "z"]
        let catalog = try CatalogDocument(
            currency: "EUR",
            services: names.dropLast().map { .init(name: $0, minimumSkill: "junior", price: "1.00") },
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")]
        ).catalog()
        for name in names.dropLast(2) { #expect(catalog.service(named: name)?.name == name) }
        #expect(catalog.service(named: "z")?.name == "Z")
    }

    @Test("in a catalog of thousands of services, each is found by its name in any case, and no other name is")
    func manyServices() throws {
        let names = (0..<3_000).map { "Service \($0) of the Garage" }
        let catalog = try CatalogDocument(
            currency: "EUR",
            services: names.map { .init(name: $0, minimumSkill: "junior", price: "1.00") },
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")]
        ).catalog()
        for name in names {
            #expect(catalog.service(named: name)?.name == name)
            #expect(catalog.service(named: " \(name.uppercased())\t")?.name == name)
            #expect(catalog.service(named: name + "!") == nil)
        }
        #expect(catalog.service(named: "Service 3000 of the Garage") == nil)
    }

    @Test("a name whose key is plain ASCII only once lowered (a Kelvin sign) is found by that key")
    func asciiOnceLowered() throws {
        let catalog = try CatalogDocument(
            currency: "EUR",
            services: [.init(name: "\u{212A}elvin Check", minimumSkill: "junior", price: "1.00")],
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")]
        ).catalog()
        for asked in ["kelvin check", "KELVIN CHECK", "\u{212A}ELVIN check"] {
            #expect(catalog.service(named: asked)?.name == "\u{212A}elvin Check", "\(asked)")
        }
    }

    @Test("a catalog's problems echo its text as a request's do: cut short, control characters replaced")
    func problemsEchoSafely() throws {
        let document = CatalogDocument(
            services: [.init(name: "Wash", minimumSkill: "jun\u{202E}ior", price: String(repeating: "9", count: 100))],
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")])
        let problems = try #require(throws: CatalogError.self) { try document.catalog() }.problems
        let messages = problems.map(\.message).joined(separator: "\n")
        #expect(!messages.contains("\u{202E}"))
        #expect(messages.contains("\u{FFFD}"))
        #expect(messages.contains("…"), "a 100-digit price is cut short")
    }

    @Test("a catalog file is validated with every problem at its exact path")
    func invalidDocument() throws {
        let document = CatalogDocument(
            currency: "USD",
            services: [
                .init(name: "Oil Change", minimumSkill: "junior", price: "35.00"),
                .init(name: "oil change", minimumSkill: "junior", price: "36.00"),
                .init(name: "Rotate Tyres", minimumSkill: "wizard", price: "20.00"),
                .init(name: "Wash", minimumSkill: "junior", priceCents: -100),
                .init(name: "Wax", minimumSkill: "junior", price: "a lot"),
            ],
            mechanics: [
                .init(id: 1, name: "Ann", skill: "junior"),
                .init(id: 1, name: "Bob", skill: "master"),
                .init(id: 2, name: "ann", skill: "junior"),
            ],
            coupons: [.init(code: "HALF", percentOff: 150), .init(code: "BOTH", percentOff: 5, amountOff: "1.00")]
        )
        let error = #expect(throws: CatalogError.self) { try document.catalog() }
        let fields = Set(error?.problems.map(\.field) ?? [])
        #expect(
            fields == [
                "services[1].name", "services[2].minimumSkill", "services[3].price", "services[4].price",
                "mechanics[1].id", "mechanics[2].name", "coupons[0].percentOff", "coupons[1]",
            ])
        #expect(error?.problems.contains { $0.message.contains("unknown skill \"wizard\"") } == true)
    }

    @Test("a catalog decodes from JSON data and matches the built-in one")
    func decodesFromJSON() throws {
        let data = try JSONEncoder().encode(CatalogDocument.standard)
        let decoded = try JSONDecoder().decode(CatalogDocument.self, from: data)
        let catalog = try decoded.catalog()
        #expect(catalog.services == Catalog.standard.services)
        #expect(catalog.mechanics == Catalog.standard.mechanics)
    }

    @Test("a coupon's expiry is read as RFC 3339 and applies from that instant on")
    func couponExpiry() throws {
        let document = CatalogDocument(
            services: [.init(name: "Oil Change", minimumSkill: "junior", price: "35.00")],
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")],
            coupons: [.init(code: "SPRING", amountOff: "5.00", expires: "2026-03-01T00:00:00Z")])
        let coupon = try #require(try document.catalog().coupon(code: "SPRING"))
        let expiry = try #require(coupon.expiresAt)
        #expect(!coupon.isExpired(at: expiry.addingTimeInterval(-1)))
        #expect(coupon.isExpired(at: expiry))
    }
}
