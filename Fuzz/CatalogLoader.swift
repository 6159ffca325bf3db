// Fuzz target `catalog`: a catalog file in JSON, read as the daemon reads one, validated, and
// when valid, used: looked up, fingerprinted, and each service, mechanic and coupon priced.
import Foundation
import QuoteCore

private let decoder = JSONDecoder()
private let now = Date(timeIntervalSince1970: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    guard let document = try? decoder.decode(CatalogDocument.self, from: bytes) else { return 0 }
    let catalog: Catalog
    do {
        catalog = try document.catalog()
    } catch {
        _ = error.description
        return 0
    }
    _ = catalog.fingerprint
    // Every entry is found by its name, whatever spaces surround it.
    for service in catalog.services where catalog.service(named: " \(service.name)\t") == nil {
        fatalError("service \"\(service.name)\" is not found by its name")
    }
    for mechanic in catalog.mechanics where catalog.mechanic(named: " \(mechanic.name)\t")?.id != mechanic.id {
        fatalError("mechanic \"\(mechanic.name)\" is not found by its name")
    }
    for coupon in catalog.coupons where catalog.coupon(code: " \(coupon.code)\t") == nil {
        fatalError("coupon \"\(coupon.code)\" is not found by its code")
    }
    let all = catalog.services.prefix(QuoteLimits.maximumServices).map(\.name)
    // Each service alone with each mechanic, then everything with each coupon.
    for service in catalog.services.prefix(16) {
        for mechanic in catalog.mechanics.prefix(4) {
            price([service.name], mechanic: mechanic.name, coupon: nil, in: catalog)
        }
    }
    for coupon in catalog.coupons.prefix(16) {
        price(all, mechanic: nil, coupon: coupon.code, in: catalog)
    }
    price(all, mechanic: nil, coupon: nil, in: catalog)
    return 0
}

private func price(_ services: [String], mechanic: String?, coupon: String?, in catalog: Catalog) {
    let submission = Submission(
        customer: .init(name: "Ann Lee", email: "ann@example.com", address: "1 Elm Street"),
        car: .init(make: "Toyota", model: "Camry", year: 2015, trim: "LE"), services: services, mechanic: mechanic,
        coupon: coupon)
    do {
        let request = try QuoteBuilder(submission).build(in: catalog, at: now)
        let quote = try Quote(id: QuoteID(1), request: request, submittedAt: now).priced(
            currency: catalog.currency, at: now)
        guard let pricing = quote.pricing else { fatalError("a complete request was not priced") }
        guard pricing.total.cents >= 0, pricing.total.cents <= pricing.subtotal.cents else {
            fatalError("total \(pricing.total) outside 0...\(pricing.subtotal)")
        }
        if let mechanic = request.preferredMechanic {
            _ = try quote.booked(with: mechanic, at: now).completed(at: now)
        }
    } catch {
        _ = error.description
    }
}
