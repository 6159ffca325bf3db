extension Quote {
    /// The message for the customer in the current state (the State article's words).
    public var customerMessage: String {
        var text = MessageText()
        writeCustomerMessage(into: &text)
        return text.value
    }

    /// Writes ``customerMessage`` into `sink`, piece by piece: every quote published carries
    /// it, and the JSON writer copies the pieces into its output.
    @inlinable public func writeCustomerMessage(into sink: inout some CustomerMessageSink & ~Copyable) {
        switch stage {
        case .submitted:
            sink.append(
                fixed: "Your quote has been submitted and is being processed right now, please wait a few moments")
        case .pending:
            sink.append(fixed: "Your quote is currently pending, we will get back to you with a ready quote soon")
        case .ready(let pricing):
            if let notice {
                sink.append(text: notice)
                sink.append(fixed: " ")
            }
            sink.append(fixed: "Your quote is ready. The total for the services you have requested is: ")
            sink.append(amount: pricing.total)
        case .booked(_, let assignment):
            sink.append(fixed: "Your appointment has been booked with ")
            sink.append(text: assignment.mechanic.name)
            sink.append(fixed: ".")
        case .completed:
            sink.append(fixed: "Thank you for using YourMechanic.")
        case .cancelled:
            sink.append(fixed: "Your quote has been cancelled.")
        case .waiting(_, _, let mechanic?):
            sink.append(text: mechanic.name)
            sink.append(
                fixed:
                    " is busy; your quote is next in line for them and will be booked as soon as they are free.")
        case .waiting:
            sink.append(
                fixed: "All our mechanics are busy; your quote is in line and will be booked as soon as one is free.")
        }
    }
}

/// The message as one `String`.
private struct MessageText: CustomerMessageSink {
    var value = ""

    mutating func append(fixed text: StaticString) { value += text.description }

    mutating func append(text: String) { value += text }

    mutating func append(amount: Money) { value += amount.formatted }
}
