import Foundation

/// A whole-number setting, read the same way by every component: given as a number or as text
/// (`"1_000"`), and within its range. Each component reads its own keys and names them in its
/// errors; this module knows no configuration library.
package enum WholeNumberSetting {
    /// Why a value cannot be used, without its key (the caller adds it).
    package struct Invalid: Error, Sendable {
        /// What is wrong with the value.
        package let reason: String
    }

    /// The setting's value from what the configuration holds at its key, as a number or as
    /// text; `nil` when it holds neither.
    ///
    /// - Throws: ``Invalid``: text that is not a whole number, or a number outside `range`.
    package static func value(number: Int?, text: String?, in range: ClosedRange<Int>) throws(Invalid) -> Int? {
        let value: Int
        if let number {
            value = number
        } else if let text {
            guard let number = Int(text.replacingOccurrences(of: "_", with: "")) else {
                throw Invalid(reason: "\"\(text)\" is not a whole number")
            }
            value = number
        } else {
            return nil
        }
        guard range.contains(value) else {
            throw Invalid(reason: "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}
