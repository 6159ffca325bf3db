import Foundation
import TestSupport
import Testing
import ZeroMQ

/// czmq's `zcert` files, read and written as czmq and pyzmq's `zmq.auth` do: checked against
/// pyzmq itself, in both directions.
@Suite("CURVE certificates")
struct CertificateTests {
    let directory: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("certs-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    @Test("a certificate written reads back the same, and its public file holds no secret")
    func roundTrip() throws {
        let certificate = try Certificate.generate(metadata: ["role": "operator", "name": "ops 1"])
        let files = try certificate.save(named: "ops", in: directory)
        #expect(try Certificate.load(try #require(files.secretFile)) == certificate)
        let publicOnly = try Certificate.load(files.publicFile)
        #expect(publicOnly == certificate.publicCertificate)
        #expect(publicOnly.secretKey == nil)
        #expect(!(try String(contentsOfFile: files.publicFile, encoding: .utf8)).contains("secret-key"))
        let mode = try FileManager.default.attributesOfItem(atPath: try #require(files.secretFile))[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o600)
    }

    @Test(
        "a FIFO, a directory or an oversized file in a certificate's place is refused at once, never waited on or read whole",
        arguments: ["fifo", "directory", "huge"])
    func onlySmallRegularFilesAreRead(kind: String) throws {
        let path = directory + "/odd.key"
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        default:
            let certificate = try Certificate.generate()
            let text = try String(
                contentsOfFile: try certificate.save(named: "big", in: directory).publicFile, encoding: .utf8)
            try (text + String(repeating: "# padding\n", count: 10_000)).write(
                toFile: path, atomically: true, encoding: .utf8)
        }
        let refused = #expect(throws: CertificateError.self) { try Certificate.load(path) }
        #expect(refused?.code == .unreadable, "\(String(describing: refused))")
    }

    @Test("an existing pair is never replaced unless asked")
    func noAccidentalReplace() throws {
        let first = try Certificate.generate()
        try first.save(named: "key", in: directory)
        let refused = #expect(throws: CertificateError.self) {
            try Certificate.generate().save(named: "key", in: directory)
        }
        #expect(refused?.code == .exists)
        #expect(try Certificate.load(directory + "/key.key_secret") == first)
        let second = try Certificate.generate()
        try second.save(named: "key", in: directory, replacing: true)
        #expect(try Certificate.load(directory + "/key.key_secret") == second)
    }

    @Test("values quoted or not, comment lines, indentation by tabs and CRLF line ends all read")
    func zplVariants() throws {
        let keys = try CurveKeyPair.generate()
        let publicZ85 = try Z85.encode(keys.publicKey)
        let text =
            "# a comment\r\n\r\nmetadata\r\n\trole = client\r\n    # a comment inside a section\r\n    name = 'Ann'\r\ncurve\r\n    public-key = \(publicZ85)\r\n"
        let certificate = try Certificate(parsing: text)
        #expect(certificate.publicKey == keys.publicKey)
        #expect(certificate.metadata["name"] == "Ann")
        #expect(certificate.metadata["role"] == "client")
    }

    @Test(
        "malformed certificates are refused with the reason",
        arguments: [
            ("metadata\ncurve\n", "no curve public-key"),
            ("curve\n    public-key = \"short\"\n", "not 40 characters of Z85"),
            ("curve\n    public-key\n", "expected name = value"),
        ])
    func malformed(text: String, reason: String) {
        let error = #expect(throws: CertificateError.self) { try Certificate(parsing: text, source: "x.key") }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test("a secret key that does not belong to the public key is refused")
    func mismatchedSecret() throws {
        let one = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        let text = """
            curve
                public-key = "\(try Z85.encode(one.publicKey))"
                secret-key = "\(try Z85.encode(other.secretKey))"
            """
        let error = #expect(throws: CertificateError.self) { try Certificate(parsing: text) }
        #expect(error?.message.contains("does not belong") == true)
    }

    @Test("pyzmq's zmq.auth.create_certificates files read here, and ours read in pyzmq with the same keys")
    func pyzmqInterop() throws {
        let script = """
            import sys, zmq.auth
            directory = sys.argv[1]
            zmq.auth.create_certificates(directory, "alice", metadata={"role": "observer"})
            public, secret = zmq.auth.load_certificate(directory + "/ours.key_secret")
            only, none = zmq.auth.load_certificate(directory + "/ours.key")
            print(public.decode(), secret.decode(), only.decode(), none)
            """
        let ours = try Certificate.generate(metadata: ["role": "client"])
        try ours.save(named: "ours", in: directory)
        let output = try Python.run(script, arguments: [directory])
        #expect(
            output.split(separator: " ").map(String.init) == [
                try Z85.encode(ours.publicKey), try Z85.encode(try #require(ours.secretKey)),
                try Z85.encode(ours.publicKey), "None",
            ])
        let alice = try Certificate.load(directory + "/alice.key_secret")
        #expect(alice.metadata["role"] == "observer")
        #expect(alice.keyPair != nil)
        #expect(try Certificate.load(directory + "/alice.key").publicKey == alice.publicKey)
    }
}
