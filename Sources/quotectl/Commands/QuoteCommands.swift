import ArgumentParser
import Foundation
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl get ID`: one quote with its history.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a quote and its history.")

    @OptionGroup var quote: QuoteOptions

    func run() async throws {
        try await quote.show { .get(quoteId: $0) }
    }
}

/// `quotectl resolve ID`: support fills what a pending quote lacks, or sets a price.
struct Resolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Resolve a pending quote: fill what was missing and/or set a manual price.")

    @OptionGroup var quote: QuoteOptions
    @Option(help: "A manual price, like 66.25.") var price: String?
    @OptionGroup var car: CarOptions
    @Option(name: .customLong("service"), help: "Replace the services (repeat for several).")
    var services: [String] = []

    func run() async throws {
        let resolution = Resolution(car: car.applied(to: nil), services: services.isEmpty ? nil : services)
        try await quote.show { .resolve(quoteId: $0, resolution, price: price) }
    }
}

/// `quotectl book ID`: claims a free mechanic for a ready quote.
struct Book: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Book a mechanic for a ready quote.",
        discussion: """
            Without --mechanic, quoted picks the least skilled free mechanic able to do the work. With --wait, \
            a quote that finds no one free waits in line and is booked, by quoted, as soon as a mechanic \
            who can do it is free (quotectl watch shows it).
            """)

    @OptionGroup var quote: QuoteOptions
    @Option(help: "The mechanic to book, by name.") var mechanic: String?
    @Flag(help: "When no mechanic is free (or the one named is busy), wait in line instead of being refused.")
    var wait = false

    func run() async throws {
        try await quote.show { .book(quoteId: $0, mechanic: mechanic, wait: wait) }
    }
}

/// `quotectl complete ID`: the work is done; prints the receipt.
struct Complete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Complete a booked quote, free its mechanic and print the receipt.")

    @OptionGroup var quote: QuoteOptions

    func run() async throws {
        try await quote.show({ .complete(quoteId: $0) }, receipt: true)
    }
}

/// `quotectl cancel ID`: cancels a quote in any state but completed.
struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cancel a quote (any state but completed); frees its mechanic.")

    @OptionGroup var quote: QuoteOptions
    @Option(help: "Why, for the record.") var reason: String?

    func run() async throws {
        try await quote.show { .cancel(quoteId: $0, reason: reason) }
    }
}

/// `quotectl waiting`: the wait-list, in the order quotes will be served.
struct Waiting: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the quotes waiting for a mechanic, next served first.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "At most this many quotes.") var limit: Int = 100

    func validate() throws {
        guard (1...WireRequest.maximumPage).contains(limit) else {
            throw ValidationError("--limit must be 1 to \(WireRequest.maximumPage)")
        }
    }

    func run() async throws {
        try await global.show(.waiting(limit: limit)) { answer, output in
            guard case .quotes(let quotes, _, _) = answer else { return }
            let now = Date()
            output.table(
                ["#", "ID", "CUSTOMER", "PRICE", "WAITING FOR", "SINCE", "WAITED"],
                quotes.enumerated().map { index, quote in
                    let since = quote.waitingSince ?? quote.updatedAt
                    return [
                        String(index + 1), String(quote.id), quote.customer.name, Output.money(quote.priceCents),
                        quote.waitingFor?.name ?? "anyone able", Output.time(since),
                        Output.duration(now.timeIntervalSince(since)),
                    ]
                })
        }
    }
}
