public import Foundation
public import QuoteCore

extension StateChange {
    /// A new quote's first two steps, dated `at`: created as `submitted`, announced by event
    /// `submittedSeq`, then priced to `status`, announced by `pricedSeq`.
    public static func submission(
        pricedTo status: QuoteStatus, at: Date, submittedSeq: Int64, pricedSeq: Int64
    ) -> [StateChange] {
        let steps = submissionSteps(pricedTo: status, at: at, submittedSeq: submittedSeq, pricedSeq: pricedSeq)
        return [steps.submitted, steps.priced]
    }

    /// The two steps of ``submission(pricedTo:at:submittedSeq:pricedSeq:)``, without an array.
    public static func submissionSteps(
        pricedTo status: QuoteStatus, at: Date, submittedSeq: Int64, pricedSeq: Int64
    ) -> (submitted: StateChange, priced: StateChange) {
        (
            StateChange(from: nil, to: .submitted, at: at, seq: submittedSeq),
            StateChange(from: .submitted, to: status, at: at, seq: pricedSeq)
        )
    }
}
