import Foundation

/// Lays out a ``TopFigures`` frame as lines for a terminal `width` columns wide, like
/// `circus-top` or `htop`: a title, requests by operation, errors, then the store's state.
struct TopScreen {
    let colour: Bool

    /// The frame's lines, each cut to `width` visible columns; `problem` (quoted not
    /// answering) shows under the title, over the last figures.
    func lines(_ figures: TopFigures?, width: Int, problem: String? = nil) -> [String] {
        var lines: [(text: String, style: String?)] = []
        let clock = figures.map { Self.time.string(from: $0.at) } ?? ""
        var title = "quoted top  \(figures?.endpoint ?? "")"
        if let figures {
            title += "  up \(Output.duration(figures.uptimeSeconds))  last seq \(figures.lastSeq)"
        }
        lines.append((Self.pad(title, clock, width: width), "7"))
        if let problem { lines.append(("! \(problem)", "31")) }
        guard let figures else {
            lines.append(("waiting for quoted's figures...", nil))
            return lines.map { styled(Self.cut(Printable.escaped($0.text), width), $0.style) }
        }
        lines.append(("", nil))
        lines.append((row("OPERATION", "REQ/S", "P50", "P99", "ERR/S"), "1"))
        for operation in figures.operations where operation.perSecond > 0 || operation.op == "submit" {
            lines.append(
                (
                    row(
                        operation.op, Self.rate(operation.perSecond), Self.milliseconds(operation.p50Milliseconds),
                        Self.milliseconds(operation.p99Milliseconds), Self.rate(operation.errorsPerSecond)),
                    operation.errorsPerSecond > 0 ? "33" : nil
                ))
        }
        let errorRate = figures.operations.reduce(0) { $0 + $1.errorsPerSecond }
        lines.append((row("total", Self.rate(figures.requestsPerSecond), "", "", Self.rate(errorRate)), "1"))
        lines.append(("", nil))
        let errors = figures.errors.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.rate($0.value))/s" }
        lines.append(
            ("ERRORS     " + (errors.isEmpty ? "none" : errors.joined(separator: "  ")), errors.isEmpty ? nil : "31"))
        let order = ["submitted", "pending", "ready", "waiting", "booked", "completed", "cancelled"]
        let quotes = order.map { "\($0) \(figures.quotes[$0] ?? 0)" }
        lines.append(("QUOTES     " + quotes.joined(separator: "  "), nil))
        lines.append(
            (
                "MECHANICS  busy \(figures.mechanicsBusy)  free \(figures.mechanicsFree)  off duty \(figures.mechanicsOffDuty)",
                nil
            ))
        let oldest = figures.oldestWaitSeconds.map { " (oldest \(Output.duration($0)))" } ?? ""
        lines.append(("WAITING    \(figures.waiting)\(oldest)", figures.waiting > 0 ? "35" : nil))
        lines.append(("EVENTS     \(Self.rate(figures.eventsPerSecond))/s  last seq \(figures.lastSeq)", nil))
        lines.append(("", nil))
        lines.append(("q quits · rates over the last \(String(format: "%.1f", figures.intervalSeconds)) s", "2"))
        return lines.map { styled(Self.cut(Printable.escaped($0.text), width), $0.style) }
    }

    private func styled(_ text: String, _ style: String?) -> String {
        guard colour, let style, !text.isEmpty else { return text }
        return "\u{1B}[\(style)m\(text)\u{1B}[0m"
    }

    private func row(_ op: String, _ rate: String, _ p50: String, _ p99: String, _ errors: String) -> String {
        op.padding(toLength: 11, withPad: " ", startingAt: 0) + Self.right(rate, 10) + Self.right(p50, 11)
            + Self.right(p99, 11) + Self.right(errors, 9)
    }

    private static func right(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func pad(_ left: String, _ right: String, width: Int) -> String {
        left + String(repeating: " ", count: max(1, width - left.count - right.count)) + right
    }

    static func cut(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(0, width)))
    }

    static func rate(_ value: Double) -> String { String(format: "%.1f", value) }

    static func milliseconds(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value < 10 ? String(format: "%.2f ms", value) : String(format: "%.0f ms", value)
    }

    private static let time: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()
}
