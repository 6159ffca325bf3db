import ArgumentParser
import Foundation
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl submit`: a new quote request, from flags or a JSON file.
struct Submit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Submit a quote request.",
        discussion: """
            Give the request as flags, or as a JSON file (-f quote.json, or -f - for stdin) shaped like the \
            protocol's submit request ({"customer":{...},"car":{...},"services":[...]}); flags given too \
            override the file. An idempotency key is generated unless given, so retrying a submit never \
            creates a second quote.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: [.short, .customLong("file")], help: "A JSON submission, or - for standard input.")
    var file: String?

    @Option(help: "The customer's full name.") var name: String?
    @Option(help: "The customer's email address.") var email: String?
    @Option(help: "Where the work happens.") var address: String?
    @OptionGroup var car: CarOptions
    @Option(name: .customLong("service"), help: "A service by its catalog name (repeat for several).")
    var services: [String] = []
    @Option(help: "The preferred mechanic's name.") var mechanic: String?
    @Option(help: "A coupon code.") var coupon: String?
    @Flag(help: "Book a mechanic at once if the quote is ready.") var book = false
    @Flag(help: "With --book: when no mechanic is free, wait in line instead of being refused.") var wait = false
    @Option(help: "The idempotency key (default: a new one, a version 7 UUID).") var idempotencyKey: String?
    @Option(help: "Times the submission is sent again, with its idempotency key, when no reply comes in time.")
    var retries = 2

    func request() throws(QuotedError) -> Request {
        // The file, as a submit request's fields: the submission, its key and its booking.
        var file = WireRequest(op: .submit)
        if let path = self.file {
            let data: Data
            do {
                data =
                    path == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile()
                    : try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw QuotedError(.usage, "cannot read \(path): \(error.localizedDescription)")
            }
            do {
                file = try WireCodec().decodeRequest(Array(data)).get()
            } catch {
                throw QuotedError(.usage, "\(path == "-" ? "standard input" : path) is not a submission: \(error)")
            }
        }
        var submission = Submission(
            customer: file.customer, car: file.car, services: file.services, mechanic: file.mechanic,
            coupon: file.coupon)
        var customer = submission.customer ?? .init()
        customer.name = name ?? customer.name
        customer.email = email ?? customer.email
        customer.address = address ?? customer.address
        if customer != .init() { submission.customer = customer }
        submission.car = car.applied(to: submission.car)
        if !services.isEmpty { submission.services = services }
        submission.mechanic = mechanic ?? submission.mechanic
        submission.coupon = coupon ?? submission.coupon
        return .submit(
            submission, idempotencyKey: idempotencyKey ?? file.idempotencyKey ?? IdempotencyKey.make(),
            book: book || file.book == true, wait: wait || file.wait == true)
    }

    func validate() throws {
        if wait && !book { throw ValidationError("--wait applies only with --book") }
        if !(0...100).contains(retries) { throw ValidationError("--retries must be between 0 and 100") }
    }

    func run() async throws {
        try await global.withQuoted(retries: retries) { (quoted, output) throws(QuotedError) in
            // A repeat under the same key is answered with the first quote: safe to retry.
            let sent = try request()
            let reply = try await quoted.checked(sent, retry: true)
            if output.json { return output.reply(reply) }
            guard case .change(let change) = try reply.answer(to: sent) else { return }
            let quote = change.quote
            if change.replayed {
                output.line("Already submitted with this idempotency key; nothing new was created.")
            }
            output.quote(quote)
            if let position = change.waitPosition { output.line("In line for a mechanic: number \(position).") }
            if let bookingError = change.bookingError {
                throw QuotedError(
                    refusal: WireError(
                        code: bookingError.code,
                        message:
                            "quote \(quote.id) was created (\(quote.state)) but not booked: \(bookingError.message)",
                        problems: bookingError.problems))
            }
        }
    }
}
