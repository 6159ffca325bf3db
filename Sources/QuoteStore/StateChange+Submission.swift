public import Foundation
public import QuoteCore

extension StateChange {
    /// A new quote's first two steps, dated `at`: created as `submitted`, announced by event
    /// `submittedSeq`, then priced to `status`, announced by `pricedSeq`.
    public static func submission(
        pricedTo status: QuoteStatus, at: Date, submittedSeq: Int64, pricedSeq: Int64
    ) -> [StateChange] {
        [
            StateChange(from: nil, to: .submitted, at: at, seq: submittedSeq),
            StateChange(from: .submitted, to: status, at: at, seq: pricedSeq),
        ]
    }
}
