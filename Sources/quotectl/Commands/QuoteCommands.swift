import ArgumentParser
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl get ID`: one quote with its history.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a quote and its history.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64

    func run() throws {
        var request = WireRequest(op: .get)
        request.quoteId = id
        try global.showQuote(request)
    }
}

/// `quotectl resolve ID`: support fills what a pending quote lacks, or sets a price.
struct Resolve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Resolve a pending quote: fill what was missing and/or set a manual price.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64
    @Option(help: "A manual price, like 66.25.") var price: String?
    @Option(help: "The car's model year.") var year: Int?
    @Option(help: "The car's trim.") var trim: String?
    @Option(help: "The car's make.") var make: String?
    @Option(help: "The car's model.") var model: String?
    @Option(name: .customLong("service"), help: "Replace the services (repeat for several).")
    var services: [String] = []

    func run() throws {
        var request = WireRequest(op: .resolve)
        request.quoteId = id
        request.price = price
        request.year = year
        request.trim = trim
        request.make = make
        request.model = model
        request.services = services.isEmpty ? nil : services
        try global.showQuote(request)
    }
}

/// `quotectl book ID`: claims a free mechanic for a ready quote.
struct Book: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Book a mechanic for a ready quote.",
        discussion: "Without --mechanic, quoted picks the least skilled free mechanic able to do the work.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64
    @Option(help: "The mechanic to book, by name.") var mechanic: String?

    func run() throws {
        var request = WireRequest(op: .book)
        request.quoteId = id
        request.mechanic = mechanic
        try global.showQuote(request)
    }
}

/// `quotectl complete ID`: the work is done; prints the receipt.
struct Complete: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Complete a booked quote, free its mechanic and print the receipt.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64

    func run() throws {
        var request = WireRequest(op: .complete)
        request.quoteId = id
        try global.showQuote(request, receipt: true)
    }
}

/// `quotectl cancel ID`: cancels a quote in any state but completed.
struct Cancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cancel a quote (any state but completed); frees its mechanic.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The quote id.") var id: Int64
    @Option(help: "Why, for the record.") var reason: String?

    func run() throws {
        var request = WireRequest(op: .cancel)
        request.quoteId = id
        request.reason = reason
        try global.showQuote(request)
    }
}
