import Foundation
import QuoteDaemon
import Testing

@Suite("quoted --help")
struct HelpTests {
    @Test("names the flag of every key that has one, with the key's default")
    func flagsFromTheKeyTable() throws {
        let output = try Binaries.run("quoted", ["serve", "--help"])
        #expect(output.status == 0)
        // ArgumentParser wraps help at 80 columns: compare with the lines joined.
        let help = output.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        for key in DaemonConfiguration.keys {
            guard let flag = key.flag else { continue }
            #expect(help.contains("--\(flag) <"), "--\(flag) (\(key.name)) is missing from --help")
            if let defaultText = key.defaultText {
                #expect(help.contains("(default \(defaultText))"), "\(key.name)'s default is missing from --help")
            }
        }
    }
}
