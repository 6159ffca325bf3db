import Foundation
import QuoteDaemon
import Testing

@Suite("quoted --help")
struct HelpTests {
    @Test("names the flag of every key that has one, with the key's help and default")
    func flagsFromTheKeyTable() throws {
        let output = try Binaries.run("quoted", ["serve", "--help"])
        #expect(output.status == 0)
        // ArgumentParser wraps help at 80 columns and pads it into columns: compare words.
        let help = output.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("--endpoint <endpoint> The ROUTER endpoint for commands (default tcp://127.0.0.1:5555)."))
        for key in DaemonConfiguration.keys {
            guard let flag = key.flag else { continue }
            #expect(help.contains("--\(flag) <"), "--\(flag) (\(key.name)) is missing from --help")
            #expect(key.help != nil, "--\(flag) has no help of its own in the key table")
            #expect(help.contains("--\(flag) <\(flag)> \(key.flagHelp)"), "--\(flag)'s help is not the key table's")
        }
    }
}
