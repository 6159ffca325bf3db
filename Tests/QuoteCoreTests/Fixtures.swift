import Foundation
import QuoteCore

/// Shared data for the domain tests: the articles' people and a fixed clock.
enum Fixtures {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    static let catalog = Catalog.standard

    static func reza() -> QuoteBuilder {
        var builder = QuoteBuilder()
        builder.setCustomer(
            name: "Reza Shirazian", email: "reza@example.com", address: "N Rengstorff Ave Mountain View")
        builder.addService("Brake Inspection")
        builder.addService("Battery Inspection")
        builder.addService("Oil Change")
        builder.setCar(make: "Honda", model: "Civic", year: 2014, trim: "EX")
        return builder
    }

    static func johnLee() -> QuoteBuilder {
        var builder = QuoteBuilder()
        builder.setCustomer(name: "John Lee", email: "john.lee@example.com", address: "1 Infinite Loop Cupertino")
        builder.setCar(make: "Toyota", model: "Corolla", year: 2012)
        builder.addService("Oil Change")
        builder.addService("Brake Inspection")
        builder.setMechanic("Joe Murphy")
        return builder
    }

    static func mechanic(_ name: String) -> Mechanic {
        catalog.mechanic(named: name)!
    }
}
