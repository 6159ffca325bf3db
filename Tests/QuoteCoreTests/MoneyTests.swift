import PropertyBased
import QuoteCore
import Testing

@Suite("Money in integer cents")
struct MoneyTests {
    @Test(
        "amounts parse exactly from decimal text",
        arguments: [
            ("66.25", 6_625), ("$66.25", 6_625), ("66.5", 6_650), ("66", 6_600), ("0.01", 1), (" 7.00 ", 700),
            ("-5.10", -510),
        ])
    func parsing(text: String, cents: Int64) {
        #expect(Money(parsing: text)?.cents == cents)
    }

    @Test(
        "text that is not a plain amount is refused", arguments: ["", "abc", "1.234", "1.", ".5", "1,00", "1e3", "$"])
    func parsingRefuses(text: String) {
        #expect(Money(parsing: text) == nil)
    }

    @Test(
        "amounts format as people read them",
        arguments: [
            (6_625, "$66.25"), (5, "$0.05"), (-500, "-$5.00"), (0, "$0.00"), (100, "$1.00"), (1_000_000, "$10000.00"),
            (.max, "$92233720368547758.07"), (.min, "-$92233720368547758.08"),
        ])
    func formatting(cents: Int64, text: String) {
        #expect(Money(cents: cents).formatted == text)
    }

    @Test(
        "an amount is written after its currency's symbol",
        arguments: [("eur", 1_250, "€12.50"), ("GBP", -7, "-£0.07"), ("chf", 99_900, "CHF 999.00")])
    func symbols(code: String, cents: Int64, text: String) {
        #expect(Money(cents: cents, currency: Currency(code)).formatted == text)
    }

    @Test("formatting then parsing gives back the same cents")
    func roundTrip() async {
        await propertyCheck(input: Gen.int64(in: -1_000_000_000_000...1_000_000_000_000)) { cents in
            let money = Money(cents: cents)
            #expect(Money(parsing: money.formatted) == money)
            #expect(Money(parsing: money.decimalString) == money)
        }
    }

    @Test("addition is exact, associative and undone by subtraction")
    func arithmetic() async throws {
        let amount = Gen.int64(in: -1_000_000_000...1_000_000_000)
        await propertyCheck(input: amount, amount, amount) { a, b, c in
            let x = Money(cents: a)
            let y = Money(cents: b)
            let z = Money(cents: c)
            let left = try x.adding(y).adding(z)
            let right = try x.adding(y.adding(z))
            #expect(left == right)
            #expect(try x.adding(y).subtracting(y) == x)
            let sum = try [x, y, z].sum(in: .usd)
            #expect(sum.cents == a + b + c)
        }
    }

    @Test("arithmetic that would overflow or mix currencies throws instead of trapping")
    func refusals() throws {
        let largest = Money(cents: .max)
        #expect(throws: MoneyError.self) { try largest.adding(Money(cents: 1)) }
        #expect(throws: MoneyError.self) { try Money(cents: .min).subtracting(Money(cents: 1)) }
        #expect(throws: MoneyError.self) { try largest.percentage(100) }
        #expect(throws: MoneyError.self) {
            try Money(cents: 1, currency: .usd).adding(Money(cents: 1, currency: Currency("EUR")))
        }
        #expect(throws: MoneyError.self) { try [largest, largest].sum(in: .usd) }
        // Ordered without a trap across currencies.
        #expect(Money(cents: 5, currency: Currency("EUR")) < Money(cents: 1, currency: .usd))
    }

    @Test("a percentage rounds half up to the cent and a coupon never takes more than the subtotal")
    func discounts() async throws {
        #expect(try Money(cents: 6_625).percentage(10).cents == 663)
        #expect(try Money(cents: 6_700).percentage(10).cents == 670)
        await propertyCheck(input: Gen.int64(in: 0...10_000_000), Gen.int(in: 1...100), Gen.int64(in: 1...20_000_000)) {
            cents, percent, fixed in
            let subtotal = Money(cents: cents)
            let byPercent = try Coupon(code: "P", discount: .percent(percent)).discount(on: subtotal)
            let byAmount = try Coupon(code: "A", discount: .amount(Money(cents: fixed))).discount(on: subtotal)
            for discount in [byPercent, byAmount] {
                #expect(discount.cents >= 0)
                #expect(discount <= subtotal)
            }
            // Exact: the percentage is within half a cent of the true value.
            #expect(abs(byPercent.cents * 100 - cents * Int64(percent)) <= 50)
        }
    }
}
