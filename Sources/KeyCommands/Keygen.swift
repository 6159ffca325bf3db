public import ArgumentParser
import Foundation
import QuoteWire
import ZeroMQ

/// `keygen NAME`, in both `quoted` and `quotectl`: a CURVE certificate pair in czmq's format,
/// for quoted itself (its server key) or for a client (whose public file, with its role, goes
/// in quoted's clients directory).
public struct Keygen: ParsableCommand {
    public static let configuration = CommandConfiguration(
        abstract: "Write a CURVE certificate pair: NAME.key (public) and NAME.key_secret (mode 0600).")

    @Argument(help: "The certificate's name, also written into its metadata.") var name: String
    @Option(help: "The role of a client key: \(Role.allCases.map(\.rawValue).joined(separator: ", ")).")
    var role: String?
    @Option(name: .customLong("dir"), help: "Where to write the files.") var directory = "."
    @Flag(help: "Replace files of the same name.") var force = false

    public init() {}

    public func validate() throws {
        if let role, Role(rawValue: role) == nil {
            throw ValidationError(
                "unknown role \"\(role)\"; use one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard !name.isEmpty, !name.contains("/") else { throw ValidationError("NAME must be a plain file name") }
    }

    public func run() throws {
        var metadata = ["name": name]
        if let role { metadata["role"] = role }
        do {
            let files = try Certificate.generate(metadata: metadata).save(
                named: name, in: directory, replacing: force)
            FileHandle.standardOutput.write(
                Data("public: \(files.publicFile)\nsecret: \(files.secretFile ?? "-")\n".utf8))
        } catch let error as CertificateError where error.code == .exists {
            throw ValidationError("\(error.message); use --force to replace it")
        }
    }
}
