// Fuzz target `request`: a command frame as the daemon reads it, then what the daemon does with
// it short of the store. Checks that nothing traps, and that every reply the hand-written JSON
// writer produces reads back, with `JSONDecoder`, as the reply it was written from.
import Foundation
import QuoteCore
import QuoteRules
import QuoteStoreCodec
import QuoteWire

/// libFuzzer calls the target from one thread only.
nonisolated(unsafe) private let codec = WireCodec()
private let catalog = Catalog.standard
private let rulebook = Rulebook()
private let actor = Actor(name: "fuzz")
/// A whole second: replies carry milliseconds, so the dates read back exactly.
private let now = Date(timeIntervalSince1970: 1_800_000_000)

/// Quotes in each state a write can start from, built from a valid submission for each input
/// that needs them, not once for the process: a stage's box is held through a pointer whose
/// spare bits carry the enum's case, which LeakSanitizer does not take for a pointer, so at exit
/// it reported what a global held that way as leaked.
private func makeFixtures() -> (pending: Quote, ready: Quote, booked: Quote) {
    let customer = Customer(name: "Ann Lee", email: "ann@example.com", address: "1 Elm Street")
    let listed = catalog.services.prefix(2).map { RequestedService(name: $0.name, listed: $0) }
    let pending = QuoteRequest(
        customer: customer, car: Car(make: "Toyota", model: "Camry"),
        services: listed + [RequestedService(name: "Strange Noise", listed: nil)])
    let complete = QuoteRequest(
        customer: customer, car: Car(make: "Toyota", model: "Camry", year: 2015, trim: "LE"), services: listed)
    do {
        let first = try Quote(id: QuoteID(7), request: pending, submittedAt: now).priced(
            currency: catalog.currency, at: now)
        let ready = try Quote(id: QuoteID(8), request: complete, submittedAt: now).priced(
            currency: catalog.currency, at: now)
        let booked = try ready.booked(with: catalog.mechanics[0], at: now)
        return (first, ready, booked)
    } catch {
        fatalError("fuzz fixtures: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let request: WireRequest
    switch codec.decodeRequest(bytes) {
    case .success(let decoded): request = decoded
    case .failure(let error):
        checkReply(.failure(nil, error))
        return 0
    }
    let id = request.id
    do {
        switch try request.action(currency: catalog.currency) {
        case .write(let command): write(command, id: id)
        case .read(let query): read(query, id: id)
        }
    } catch {
        checkReply(.failure(id, error))
    }
    return 0
}

private func write(_ command: QuoteCommand, id: RequestID?) {
    do throws(QuoteError) {
        let quote: Quote
        switch command {
        case .submit(let submission, _, _, _):
            // The builder alone, then as the rules check it (validated and priced): the rules
            // read the submission where it lies, and must make of it what a builder makes.
            let built = Result { () throws(QuoteError) in try QuoteBuilder(submission).build(in: catalog, at: now) }
            let inPlace = Result { () throws(QuoteError) in try QuoteBuilder.build(submission, in: catalog, at: now) }
            guard built == inPlace else { fatalError("QuoteBuilder.build(_:in:at:) differs from a builder's build") }
            guard
                case .submit(let checked, _, _, _) = try rulebook.check(command, in: catalog, at: now, by: actor).get()
            else { fatalError("a submit checked as another command") }
            quote = Quote(
                id: QuoteID(1), request: checked.request, stage: checked.stage, submittedAt: now, updatedAt: now,
                submittedBy: actor.name)
            checkStored(quote)
        case .resolve(_, let resolution):
            quote = try makeFixtures().pending.resolved(with: resolution, in: catalog, at: now)
        case .book(_, _, let wait):
            guard case .book(_, let mechanic, _) = try rulebook.check(command, in: catalog, at: now).get() else {
                fatalError("a book checked as another command")
            }
            let ready = makeFixtures().ready
            quote =
                wait
                ? try ready.waiting(for: mechanic, at: now)
                : try ready.booked(with: mechanic ?? catalog.mechanics[0], at: now)
        case .complete:
            quote = try makeFixtures().booked.completed(at: now)
        case .cancel(_, let reason):
            quote = try makeFixtures().ready.cancelled(reason: reason, at: now)
        case .setDuty:
            guard case .setDuty(let mechanic, let onDuty) = try rulebook.check(command, in: catalog, at: now).get()
            else { fatalError("a setDuty checked as another command") }
            var reply = WireReply.success(id)
            reply.mechanic = WireQuote.WireMechanic(mechanic)
            reply.onDuty = onDuty
            checkReply(reply)
            return
        case .reassign:
            guard case .reassign(_, let mechanic) = try rulebook.check(command, in: catalog, at: now).get() else {
                fatalError("a reassign checked as another command")
            }
            if let mechanic {
                quote = try makeFixtures().booked.reassigned(to: mechanic, at: now)
            } else {
                quote = try makeFixtures().booked.requeued(at: now)
            }
        case .addMechanic, .updateMechanic, .retireMechanic:
            // Checked against the catalog in the transaction; the reply names the mechanic.
            guard case .success = rulebook.check(command, in: catalog, at: now) else { return }
            var reply = WireReply.success(id)
            reply.mechanic = WireQuote.WireMechanic(catalog.mechanics[0])
            checkReply(reply)
            return
        case .applyCatalog(let applied):
            // A catalog that passed the wire's checks reads back as a document, whole.
            guard (try? CatalogDocument(applied).catalog()) == applied else {
                fatalError("an applied catalog does not read back from its document")
            }
            var reply = WireReply.success(id)
            reply.catalogVersion = applied.version + 1
            checkReply(reply)
            return
        }
        checkQuoteReply(quote, id: id)
    } catch {
        checkReply(.failure(id, WireError(error)))
    }
}

private func read(_ query: ReadQuery, id: RequestID?) {
    var reply = WireReply.success(id)
    switch query {
    case .services: reply.services = catalog.services.map(WireReply.service)
    case .ping: reply.pong = true
    case .get: reply.quote = WireQuote(makeFixtures().booked, currency: catalog.currency)
    case .catalog:
        reply.catalogVersion = 1
        reply.catalog = CatalogDocument(catalog)
    default: break
    }
    checkReply(reply)
}

/// A reply written with a quote encoded once, as the daemon writes a write's reply: both ways
/// of encoding the quote agree, and the frame reads back as the reply.
private func checkQuoteReply(_ quote: Quote, id: RequestID?) {
    let encoded = codec.encodeQuote(quote, currency: catalog.currency)
    let wire = WireQuote(quote, currency: catalog.currency)
    // Written from the domain, it is the JSON `WireQuote`'s `Codable` conformance writes, key
    // for key at every level, and it reads back as the wire value.
    let viaCodable = codec.encodeQuote(wire)
    guard (try? codec.decode(WireQuote.self, from: Array(encoded.json))) == wire,
        let direct = try? JSONSerialization.jsonObject(with: Data(encoded.json)) as? NSDictionary,
        let expected = try? JSONSerialization.jsonObject(with: Data(viaCodable.json)) as? NSDictionary,
        direct == expected
    else {
        fatalError(
            "the quote's two encodings differ:\n\(text(Array(encoded.json)))\n\(text(Array(viaCodable.json)))")
    }
    var reply = WireReply.success(id)
    reply.quote = wire
    check(codec.encode(reply, quote: encoded), reads: reply)
}

private func checkReply(_ reply: WireReply) {
    check(codec.encode(reply), reads: reply)
}

private func check(_ frame: [UInt8], reads reply: WireReply) {
    let decoded: WireReply
    do {
        decoded = try codec.decode(WireReply.self, from: frame)
    } catch {
        fatalError("a reply frame does not read back (\(error)):\n\(text(frame))")
    }
    guard decoded == reply else {
        fatalError("a reply frame reads back different:\n\(text(frame))\nwritten: \(reply)\nread: \(decoded)")
    }
}

/// The stored form of a submitted quote reads back as the quote.
private func checkStored(_ quote: Quote) {
    let record = QuoteCodec.encode(quote)
    do {
        guard try QuoteCodec.decodeQuote(record) == quote else { fatalError("a stored quote reads back different") }
    } catch {
        fatalError("a stored quote does not read back: \(error)")
    }
}

private func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}
