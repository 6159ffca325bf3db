import ArgumentParser
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl list`: quotes, newest last, optionally by state, a page at a time.
struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List quotes, optionally by state or customer.")

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only quotes in this state (\(QuoteStatus.allCases.map(\.rawValue).joined(separator: ", "))).")
    var state: String?
    @Option(help: "Only this customer's quotes: an email address (exact, any case) or the start of a name.")
    var customer: String?
    @Option(help: "At most this many quotes.") var limit: Int = 50
    @Option(help: "Start after this quote id (for the next page).") var after: Int64?

    func validate() throws {
        guard (1...WireRequest.maximumPage).contains(limit) else {
            throw ValidationError("--limit must be 1 to \(WireRequest.maximumPage)")
        }
        if let customer, CustomerSearch(customer) == nil { throw ValidationError("--customer must not be blank") }
        if let state, QuoteStatus(rawValue: state) == nil {
            throw ValidationError(
                "unknown state \"\(state)\"; use one of \(QuoteStatus.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
    }

    func run() async throws {
        try await global.show(.list(state: state, customer: customer, after: after, limit: limit)) {
            answer, output in
            guard case .quotes(let quotes, let next, _) = answer else { return }
            output.table(
                ["ID", "STATE", "CUSTOMER", "CAR", "PRICE", "MECHANIC", "UPDATED"],
                quotes.map { quote in
                    [
                        String(quote.id), quote.state, quote.customer.name, "\(quote.car.make) \(quote.car.model)",
                        Output.money(quote.priceCents), quote.mechanic?.name ?? "-", Output.time(quote.updatedAt),
                    ]
                },
                styling: [1: output.state])
            if let next {
                output.errorLine(
                    "more: quotectl list --after \(next)\(state.map { " --state \($0)" } ?? "")"
                        + (customer.map { " --customer '\($0)'" } ?? ""))
            }
        }
    }
}
