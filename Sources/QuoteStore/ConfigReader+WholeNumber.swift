package import Configuration
import Foundation

extension ConfigReader {
    /// The whole number at `key`, given as a number or as text (`"1_000"`), or `nil` when the
    /// key is absent. Each component names its own keys; this reads the value the same way for
    /// all of them.
    ///
    /// - Throws: ``InvalidConfigValue`` with the reason, for the caller to report beside its key:
    ///   text that is not a whole number, or a number outside `range`.
    package func wholeNumber(forKey key: String, in range: ClosedRange<Int>) throws(InvalidConfigValue) -> Int? {
        let configKey = ConfigKey(key)
        let value: Int
        if let number = int(forKey: configKey) {
            value = number
        } else if let text = string(forKey: configKey) {
            guard let number = Int(text.replacingOccurrences(of: "_", with: "")) else {
                throw InvalidConfigValue(reason: "\"\(text)\" is not a whole number")
            }
            value = number
        } else {
            return nil
        }
        guard range.contains(value) else {
            throw InvalidConfigValue(reason: "\(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}

/// Why a configuration value cannot be used, without its key (the caller adds it).
package struct InvalidConfigValue: Error, Sendable {
    /// What is wrong with the value.
    package let reason: String
}
