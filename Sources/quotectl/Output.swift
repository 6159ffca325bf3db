import Foundation
import QuoteClient
import QuoteCore
import QuoteWire

#if canImport(Glibc)
    import Glibc
#endif

/// Everything quotectl prints: tables and quotes for people, JSON lines for programs.
/// Colour only on a terminal and never with NO_COLOR. Lines are written unbuffered, so a
/// pipe (`quotectl watch --json | jq`) sees each as it happens.
struct Output {
    let json: Bool
    let colour: Bool
    private let codec = WireCodec()

    init(json: Bool) {
        self.json = json
        colour = isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
    }

    // MARK: Writing

    /// Writes one line to standard output, every unsafe character escaped (``Printable``).
    func line(_ text: String) {
        var text = Printable.escaped(text, keepingColour: colour) + "\n"
        text.withUTF8 { buffer in _ = Glibc.write(1, buffer.baseAddress, buffer.count) }
    }

    func errorLine(_ text: String) {
        var text = Printable.escaped(text) + "\n"
        text.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    }

    func reply(_ reply: WireReply) {
        line(String(decoding: codec.encode(reply), as: UTF8.self))
    }

    func event(_ event: WireEvent) {
        line(String(decoding: codec.encode(event), as: UTF8.self))
    }

    func failure(_ error: QuotedError) {
        if let refusal = error.refusal {
            errorLine("quotectl: refused (\(refusal.code.rawValue)): \(refusal.message)")
            for problem in refusal.problems ?? [] { errorLine("  - \(problem.field): \(problem.message)") }
        } else {
            errorLine("quotectl: \(error.message)")
            for problem in error.problems { errorLine("  - \(problem.field): \(problem.message)") }
        }
    }

    // MARK: Styling

    func styled(_ text: String, _ code: String) -> String {
        colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func state(_ name: String) -> String {
        switch name {
        case "ready": styled(name, "32")
        case "pending": styled(name, "33")
        case "booked": styled(name, "36")
        case "completed": styled(name, "1;32")
        case "cancelled": styled(name, "31")
        case "waiting": styled(name, "35")
        default: name
        }
    }

    static func money(_ cents: Int64?) -> String {
        guard let cents else { return "-" }
        let magnitude = cents.magnitude
        return "\(cents < 0 ? "-" : "")$\(magnitude / 100).\(magnitude % 100 < 10 ? "0" : "")\(magnitude % 100)"
    }

    /// A span for people: `42s`, `3m07s`, `2h05m`.
    static func duration(_ seconds: TimeInterval) -> String {
        let whole = max(0, Int(seconds.rounded(.down)))
        if whole < 60 { return "\(whole)s" }
        if whole < 3_600 { return "\(whole / 60)m\(String(format: "%02d", whole % 60))s" }
        return "\(whole / 3_600)h\(String(format: "%02d", whole / 60 % 60))m"
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    // MARK: Shapes

    func quote(_ quote: WireQuote, history: [WireReply.HistoryStep]? = nil) {
        var rows: [(String, String)] = []
        rows.append(("Customer", "\(quote.customer.name) <\(quote.customer.email)>, \(quote.customer.address)"))
        let car = [quote.car.year.map(String.init), quote.car.make, quote.car.model, quote.car.trim].compactMap { $0 }
        rows.append(("Car", car.joined(separator: " ")))
        rows.append(
            ("Services", quote.services.map { "\($0.name) (\(Self.money($0.priceCents)))" }.joined(separator: ", ")))
        if let preferred = quote.preferredMechanic { rows.append(("Preferred", preferred)) }
        if let coupon = quote.coupon { rows.append(("Coupon", coupon)) }
        if quote.priceCents != nil {
            rows.append(
                ("Price", Self.money(quote.priceCents) + (quote.manualPrice == true ? " (set by support)" : "")))
        }
        if let mechanic = quote.mechanic { rows.append(("Mechanic", "\(mechanic.name) (\(mechanic.skill))")) }
        if let since = quote.waitingSince {
            rows.append(("Waiting", "for \(quote.waitingFor?.name ?? "anyone able"), since \(Self.time(since))"))
        }
        for reason in quote.pendingReasons ?? [] { rows.append(("Pending", reason.message)) }
        if let receipt = quote.receipt {
            rows.append(("Receipt", "\(receipt.total) paid, completed \(Self.time(receipt.completedAt))"))
        }
        rows.append(("Message", quote.message))
        if let submitter = quote.submittedBy { rows.append(("Submitter", submitter)) }
        rows.append(("Updated", Self.time(quote.updatedAt)))
        line("Quote \(quote.id)  \(state(quote.state))")
        for (label, value) in rows { line("  " + label.padding(toLength: 10, withPad: " ", startingAt: 0) + value) }
        if let history, !history.isEmpty {
            line("  History")
            for step in history {
                line("    #\(step.seq)  \(Self.time(step.at))  \(step.from ?? "new") -> \(step.to)")
            }
        }
    }

    /// A receipt, line by line.
    func receipt(_ receipt: WireQuote.WireReceipt) {
        line("Receipt for \(receipt.customer.name), completed \(Self.time(receipt.completedAt))")
        let width = max(receipt.lines.map(\.name.count).max() ?? 0, 8)
        for item in receipt.lines {
            line(
                "  " + item.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + Self.money(item.priceCents))
        }
        line(
            "  " + "Subtotal".padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + Self.money(receipt.subtotalCents))
        if let coupon = receipt.coupon {
            line(
                "  " + coupon.padding(toLength: width, withPad: " ", startingAt: 0) + "  -"
                    + Self.money(receipt.discountCents))
        }
        line(
            "  " + "Total".padding(toLength: width, withPad: " ", startingAt: 0) + "  " + Self.money(receipt.totalCents)
        )
        line("  Mechanic: \(receipt.mechanic.name) (\(receipt.mechanic.skill))")
    }

    /// An aligned table with a header row; `styling` colours a column's cells after padding.
    func table(_ header: [String], _ rows: [[String]], styling: [Int: (String) -> String] = [:]) {
        var widths = header.map(\.count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        func render(_ cells: [String], styled: Bool) -> String {
            cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: index == cells.count - 1 ? 0 : widths[index] - cell.count)
                let style = styled ? styling[index] : nil
                return (style?(cell) ?? cell) + padding
            }.joined(separator: "  ")
        }
        line(styled(render(header, styled: false), "1"))
        for row in rows { line(render(row, styled: true)) }
    }

    /// One watch line: time, seq, quote, from -> to, price, mechanic, message.
    func watchLine(_ event: WireEvent) {
        let head =
            "\(Self.time(event.at))  #\(event.seq)  "
            + (event.quoteId.map { "quote \($0)" } ?? (event.type.hasPrefix("catalog.") ? "catalog" : "roster"))
        // Who caused it, when quoted authenticates its clients.
        let by = event.by.map { "  by \($0)" } ?? ""
        if let quote = event.quote {
            let change =
                event.type == "quote.reassigned"
                ? "\(styled("reassigned", "35")) \(event.from ?? "-") -> \(event.to ?? "the wait-list")"
                : "\(event.from ?? "new") -> \(state(event.to ?? quote.state))"
            let price = quote.priceCents.map { Self.money($0) } ?? "-"
            let mechanic = quote.mechanic?.name ?? "-"
            line("\(head)  \(change)  \(price)  \(mechanic)  \(quote.message)\(by)")
        } else if let mechanic = event.mechanic {
            let skill = event.type == "mechanic.updated" ? "\(event.from ?? "-") -> \(mechanic.skill)" : mechanic.skill
            line("\(head)  \(styled(event.type, "35"))  \(mechanic.name) (\(skill))\(by)")
        } else if let version = event.catalogVersion {
            line("\(head)  \(styled(event.type, "35"))  version \(version)\(by)")
        }
    }
}
