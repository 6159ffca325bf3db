import Foundation
import PropertyBased
import QuoteCore
import Testing

@Suite("The quote builder")
struct QuoteBuilderTests {
    @Test("an empty builder reports every required part at once")
    func everythingMissing() {
        let problems = QuoteBuilder().problems(in: Fixtures.catalog, at: Fixtures.now)
        #expect(problems.map(\.field) == ["customer", "car", "services"])
    }

    @Test("every problem of a bad submission is reported, each at its field")
    func allProblemsAtOnce() {
        let submission = Submission(
            customer: .init(name: " ", email: "not-an-email", address: nil),
            car: .init(make: "Honda", model: nil, year: 1700),
            services: ["Oil Change", ""],
            mechanic: "Nobody",
            coupon: "FREE"
        )
        let error = #expect(throws: QuoteError.self) {
            try QuoteBuilder(submission).build(in: Fixtures.catalog, at: Fixtures.now)
        }
        #expect(error?.code == .invalidSubmission)
        #expect(
            error?.problems.map(\.field) == [
                "customer.name", "customer.email", "customer.address", "car.model", "car.year", "services[1]",
                "mechanic", "coupon",
            ])
        #expect(error?.problems.first { $0.field == "customer.email" }?.message.contains("not-an-email") == true)
    }

    @Test(
        "email addresses are checked for plausibility",
        arguments: [
            ("reza@example.com", true), ("a.b+c@mail.example.co.uk", true), ("reza@example", false),
            ("@example.com", false), ("reza@@example.com", false), ("re za@example.com", false),
            ("reza@.com", false), ("", false), ("reza@example.com.", false), ("reza@example..com", false),
            ("reza@example.com\n", false), ("rené@exämple.com", true), ("rené@exämple", false),
            ("re\u{2028}za@example.com", false), ("ren\u{85}é@example.com", false),
            ("reza@example.com\u{2029}", false), ("\u{85}reza@example.com", false), ("~Z_{|}@EXAMPLE.COM", true),
            ("re\u{A0}za@example.com", true),
        ])
    func emailPlausibility(email: String, plausible: Bool) {
        #expect(Customer.isPlausibleEmail(email) == plausible)
    }

    @Test(
        "names are kept without their surrounding spaces, whatever the script",
        arguments: [
            ("John Lee", "John Lee"), ("  John Lee\t", "John Lee"), ("\r\n José Müller \n", "José Müller"),
            (" 李小龍 ", "李小龍"), ("x", "x"),
        ])
    func namesAreTrimmed(given: String, kept: String) throws {
        var builder = Fixtures.reza()
        builder.setCustomer(name: given, email: "reza@example.com", address: "N Rengstorff Ave Mountain View")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.customer.name == kept)
    }

    @Test("Reza's three junior services are valid with any capable mechanic left to the system")
    func rezaIsValid() throws {
        let request = try Fixtures.reza().build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.services.map(\.name) == ["Brake Inspection", "Battery Inspection", "Oil Change"])
        #expect(request.requiredSkill == .junior)
        #expect(request.pendingReasons.isEmpty)
    }

    @Test(
        "Mike Fulton and Steve Brimington are refused for a brake pad replacement",
        arguments: ["Mike Fulton", "Steve Brimington"])
    func juniorsRefusedForBrakePads(name: String) {
        var builder = QuoteBuilder()
        builder.setCustomer(name: "Sarah Khosravani", email: "sarah@example.com", address: "S Rengstorff Mountain View")
        builder.setCar(make: "Honda", model: "Accord")
        builder.addService("Brake Pad Replacement")
        builder.setMechanic(name)
        let problems = builder.problems(in: Fixtures.catalog, at: Fixtures.now)
        #expect(problems == [Problem(field: "mechanic", message: "\(name) cannot perform Brake Pad Replacement")])
    }

    @Test("an apprentice is exactly sufficient for an apprentice service (>=, not >)")
    func exactSkillSuffices() throws {
        var builder = QuoteBuilder()
        builder.setCustomer(name: "Sarah Khosravani", email: "sarah@example.com", address: "S Rengstorff Mountain View")
        builder.setCar(make: "Honda", model: "Accord")
        builder.addService("Brake Pad Replacement")
        builder.setMechanic("Dick Duchess")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.preferredMechanic?.name == "Dick Duchess")
    }

    @Test("adding a timing belt replacement requires a master")
    func timingBeltNeedsMaster() throws {
        var builder = QuoteBuilder()
        builder.setCustomer(name: "Sarah Khosravani", email: "sarah@example.com", address: "S Rengstorff Mountain View")
        builder.setCar(make: "Honda", model: "Accord")
        builder.addService("Brake Pad Replacement")
        builder.setMechanic("Moris King")
        #expect(builder.problems(in: Fixtures.catalog, at: Fixtures.now).isEmpty)
        builder.addService("Timing Belt Replacement")
        #expect(
            builder.problems(in: Fixtures.catalog, at: Fixtures.now) == [
                Problem(field: "mechanic", message: "Moris King cannot perform Timing Belt Replacement")
            ])
        let request = try { () throws(QuoteError) -> QuoteRequest in
            var unassigned = builder
            unassigned.setMechanic(nil)
            return try unassigned.build(in: Fixtures.catalog, at: Fixtures.now)
        }()
        #expect(request.requiredSkill == .master)
        builder.setMechanic("Zane Marine")
        #expect(builder.problems(in: Fixtures.catalog, at: Fixtures.now).isEmpty)
    }

    @Test("coupons must exist and not have expired")
    func coupons() throws {
        var builder = Fixtures.reza()
        builder.setCoupon("welcome10")
        #expect(try builder.build(in: Fixtures.catalog, at: Fixtures.now).coupon?.code == "WELCOME10")
        builder.setCoupon("NOPE")
        #expect(builder.problems(in: Fixtures.catalog, at: Fixtures.now).map(\.field) == ["coupon"])

        let expiring = try CatalogDocument(
            services: [.init(name: "Oil Change", minimumSkill: "junior", price: "35.00")],
            mechanics: [.init(id: 1, name: "Ann", skill: "junior")],
            coupons: [.init(code: "OLD", percentOff: 50, expires: "2020-01-01T00:00:00Z")]
        ).catalog()
        var old = QuoteBuilder()
        old.setCustomer(name: "A", email: "a@example.com", address: "Here")
        old.setCar(make: "Ford", model: "Ka")
        old.addService("Oil Change")
        old.setCoupon("OLD")
        #expect(old.problems(in: expiring, at: Fixtures.now) == [Problem(field: "coupon", message: "OLD has expired")])
    }

    @Test("a service added twice counts once, and a removed one is gone")
    func serviceSet() throws {
        var builder = Fixtures.reza()
        builder.addService("oil change")
        builder.removeService("BATTERY INSPECTION")
        let request = try builder.build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.services.map(\.name) == ["Brake Inspection", "Oil Change"])
    }

    @Test(
        "a submission's services, repeated in any case or blank, count as adding them one by one does",
        arguments: [
            ["Oil Change", "oil change"], ["Oil Change", " ", "Brake Inspection", " "], ["Oil Change"],
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"],
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "A"],
            ["a", "b", "c", "d", "e", "f", "g", "h", "", "", "Oil Change", "OIL CHANGE "],
            // Beyond ASCII: the same key only once lowered.
            ["Équilibrage", "ÉQUILIBRAGE", "Oil Change"], ["\u{212A}elvin", "kelvin", "KELVIN "],
        ])
    func submittedServices(names: [String]) {
        let submitted = QuoteBuilder(
            Submission(
                customer: .init(name: "Reza", email: "reza@example.com", address: "Here"),
                car: .init(make: "Ford", model: "Ka", year: 2010, trim: "S"), services: names))
        var oneByOne = QuoteBuilder()
        oneByOne.setCustomer(name: "Reza", email: "reza@example.com", address: "Here")
        oneByOne.setCar(make: "Ford", model: "Ka", year: 2010, trim: "S")
        for name in names { oneByOne.addService(name) }
        #expect(
            submitted.problems(in: Fixtures.catalog, at: Fixtures.now)
                == oneByOne.problems(in: Fixtures.catalog, at: Fixtures.now))
        #expect(
            (try? submitted.build(in: Fixtures.catalog, at: Fixtures.now))
                == (try? oneByOne.build(in: Fixtures.catalog, at: Fixtures.now)))
    }

    @Test(
        "a name repeated in another case, or as text Swift holds equal, is one service",
        arguments: [
            ["Oil Change", " oil change"], ["Tyre Check;", "tyre check\u{37E}"], ["\u{212A}elvin", "KELVIN"],
        ])
    func repeatedOnce(names: [String]) throws {
        let request = try QuoteBuilder(
            Submission(
                customer: .init(name: "Reza", email: "reza@example.com", address: "Here"),
                car: .init(make: "Ford", model: "Ka", year: 2010, trim: "S"), services: names)
        ).build(in: Fixtures.catalog, at: Fixtures.now)
        #expect(request.services.count == 1)
    }

    @Test("a submission read where it lies is built as a builder holding it builds it, whatever its parts")
    func submissionBuiltInPlace() throws {
        typealias CustomerInput = Submission.CustomerInput
        typealias CarInput = Submission.CarInput
        // A catalog in which every check can fail: a service only a master may do, a junior
        // mechanic, a coupon that has expired.
        let catalog = try CatalogDocument(
            services: [
                .init(name: "Oil Change", minimumSkill: "junior", price: "35.00"),
                .init(name: "Brake Inspection", minimumSkill: "junior", price: "20.00"),
                .init(name: "Timing Belt Replacement", minimumSkill: "master", price: "250.00"),
            ],
            mechanics: [
                .init(id: 1, name: "Ann Junior", skill: "junior"), .init(id: 2, name: "Mo Master", skill: "master"),
            ],
            coupons: [
                .init(code: "WELCOME10", percentOff: 10),
                .init(code: "OLD", percentOff: 50, expires: "2020-01-01T00:00:00Z"),
            ]
        ).catalog()
        let customers: [CustomerInput?] = [
            nil, CustomerInput(name: " John Lee ", email: "john.lee@example.com", address: "1 Infinite Loop"),
            CustomerInput(name: " ", email: "not-an-email", address: nil),
        ]
        let cars: [CarInput?] = [
            nil, CarInput(make: "Toyota", model: "Corolla", year: 2012, trim: " LE "),
            CarInput(make: "Honda", model: nil, year: 1700), CarInput(make: "Ford", model: "Ka", trim: "  "),
        ]
        let services: [[String]?] = [
            nil, [], ["Oil Change"], ["Oil Change", " oil change", "Brake Inspection"],
            ["", " ", "\t", "Oil Change", "oil change"], ["Unknown Service", "Oil Change"],
            ["Timing Belt Replacement"], ["\u{212A}elvin", "KELVIN", "Ölwechsel", "ölwechsel"],
            Array(repeating: "Oil Change", count: 10), (1...9).map { "S\($0)" } + ["s1"],
            (1...12).map { "Service \($0)" },
            (1...(QuoteLimits.maximumServices + 1)).map { "Service \($0)" },
            (1...40).map { "Service \($0 % 35)" },
        ]
        let mechanics: [String?] = [nil, "Mo Master", " ann junior ", "Nobody", "  "]
        let coupons: [String?] = [nil, "WELCOME10", "welcome10 ", "OLD", "FREE", ""]
        // Every combination, so that every branch of the checks is reached.
        var outcomes: Set<QuoteError.Code?> = []
        for customer in customers {
            for car in cars {
                for names in services {
                    for mechanic in mechanics {
                        for coupon in coupons {
                            let submission = Submission(
                                customer: customer, car: car, services: names, mechanic: mechanic, coupon: coupon)
                            let inPlace = Result { () throws(QuoteError) in
                                try QuoteBuilder.build(submission, in: catalog, at: Fixtures.now)
                            }
                            let built = Result { () throws(QuoteError) in
                                try QuoteBuilder(submission).build(in: catalog, at: Fixtures.now)
                            }
                            #expect(inPlace == built, "\(submission)")
                            if case .failure(let error) = built {
                                outcomes.insert(error.code)
                            } else {
                                outcomes.insert(nil)
                            }
                        }
                    }
                }
            }
        }
        #expect(
            outcomes == [nil, .invalidSubmission, .notInCatalog], "valid, invalid and not in the catalog all reached")
    }

    @Test("the order of the builder's steps does not change the outcome")
    func orderIndependence() async {
        enum Step: CaseIterable, Sendable { case customer, car, service1, service2, mechanic, coupon }
        let expected = try? Fixtures.johnLeeComplete().build(in: Fixtures.catalog, at: Fixtures.now)
        await propertyCheck(input: Gen.shuffled(Step.allCases)) { steps in
            var builder = QuoteBuilder()
            for step in steps {
                switch step {
                case .customer:
                    builder.setCustomer(
                        name: "John Lee", email: "john.lee@example.com", address: "1 Infinite Loop Cupertino")
                case .car: builder.setCar(make: "Toyota", model: "Corolla", year: 2012, trim: "LE")
                case .service1: builder.addService("Oil Change")
                case .service2: builder.addService("Brake Pad Replacement")
                case .mechanic: builder.setMechanic("Joe Murphy")
                case .coupon: builder.setCoupon("WELCOME10")
                }
            }
            let request = try? builder.build(in: Fixtures.catalog, at: Fixtures.now)
            #expect(request != nil)
            #expect(Set(request?.services.map(\.name) ?? []) == Set(expected?.services.map(\.name) ?? []))
            #expect(request?.customer == expected?.customer)
            #expect(request?.car == expected?.car)
            #expect(request?.preferredMechanic == expected?.preferredMechanic)
            #expect(request?.coupon == expected?.coupon)
            #expect(request?.requiredSkill == expected?.requiredSkill)
        }
    }
}

extension Fixtures {
    static func johnLeeComplete() -> QuoteBuilder {
        var builder = QuoteBuilder()
        builder.setCoupon("WELCOME10")
        builder.setMechanic("Joe Murphy")
        builder.addService("Brake Pad Replacement")
        builder.addService("Oil Change")
        builder.setCar(make: "Toyota", model: "Corolla", year: 2012, trim: "LE")
        builder.setCustomer(name: "John Lee", email: "john.lee@example.com", address: "1 Infinite Loop Cupertino")
        return builder
    }
}
