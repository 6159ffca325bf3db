import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A CURVE certificate in czmq's `zcert` format, the files that czmq and pyzmq's `zmq.auth`
/// read and write: ZPL text with a `metadata` section (`name = value` pairs, such as a
/// client's role) and a `curve` section with `public-key` and, in the secret file only,
/// `secret-key`, both as Z85 text. Values may be quoted or not; `#` starts a comment.
///
/// A pair is two files: `NAME.key` (public: hand it to peers, or to an allow-list) and
/// `NAME.key_secret` (secret: readable by its owner only, mode 0600).
public struct Certificate: Sendable, Hashable {
    /// The public key, 32 bytes.
    public let publicKey: [UInt8]
    /// The secret key, 32 bytes; `nil` in a public certificate.
    public let secretKey: [UInt8]?
    /// The `metadata` section's pairs, such as `role` and `name`.
    public let metadata: [String: String]

    /// A certificate for `keys`, with `metadata`.
    public init(keys: CurveKeyPair, metadata: [String: String] = [:]) {
        publicKey = keys.publicKey
        secretKey = keys.secretKey
        self.metadata = metadata
    }

    /// A public certificate: `publicKey` and `metadata`, no secret.
    public init(publicKey: [UInt8], metadata: [String: String] = [:]) {
        self.publicKey = publicKey
        secretKey = nil
        self.metadata = metadata
    }

    /// The key pair, when the certificate holds its secret.
    public var keyPair: CurveKeyPair? {
        secretKey.map { CurveKeyPair(publicKey: publicKey, secretKey: $0) }
    }

    /// The same certificate without its secret, as the public file holds it.
    public var publicCertificate: Certificate { Certificate(publicKey: publicKey, metadata: metadata) }

    // MARK: Reading

    /// Reads a certificate from ZPL `text`; `source` names it in errors.
    public init(parsing text: String, source: String = "certificate") throws(CertificateError) {
        var section = ""
        var metadata: [String: String] = [:]
        var publicZ85: String?
        var secretZ85: String?
        // `isNewline`: a CRLF is one `Character`, which splitting on "\n" would miss.
        for (number, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = line.drop { $0 == " " || $0 == "\t" }
            if content.isEmpty || content.hasPrefix("#") { continue }
            let indented = content.count < line.count
            guard indented else {
                section = String(content).trimmingCharacters(in: .whitespaces)
                continue
            }
            guard let equals = content.firstIndex(of: "=") else {
                throw CertificateError(.malformed, "\(source), line \(number + 1): expected name = value")
            }
            // Trimmed of spaces and tabs only, as the indentation is: trimmed of U+00A0 too,
            // a name U+00A0 "#x" would be written back as "#x", a comment.
            let name = content[..<equals].trimmingCharacters(in: Self.indentation)
            let value = Self.value(content[content.index(after: equals)...])
            switch (section, name) {
            case ("metadata", _): metadata[name] = value
            case ("curve", "public-key"): publicZ85 = value
            case ("curve", "secret-key"): secretZ85 = value
            default: break
            }
        }
        guard let publicZ85 else { throw CertificateError(.malformed, "\(source): no curve public-key") }
        let publicKey = try Self.key(publicZ85, "public-key", source)
        let secretKey = try secretZ85.map { z85 throws(CertificateError) in try Self.key(z85, "secret-key", source) }
        if let secretKey {
            guard (try? CurveKeyPair(secretKey: secretKey).publicKey) == publicKey else {
                throw CertificateError(.malformed, "\(source): the secret-key does not belong to the public-key")
            }
        }
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.metadata = metadata
    }

    /// The largest certificate file read: one is a few hundred bytes.
    public static let maximumFileBytes = 65_536

    /// Reads the certificate file at `path`: a regular file of at most ``maximumFileBytes``.
    /// Anything else in its place (a FIFO, a device, a directory, a huge file) is refused
    /// without being waited on or read whole, so that a reload of the keys never hangs on it.
    public static func load(_ path: String) throws(CertificateError) -> Certificate {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CertificateError(.unreadable, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CertificateError(.unreadable, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CertificateError(.unreadable, "cannot read \(path): not a regular file")
        }
        guard status.st_size <= maximumFileBytes else {
            throw CertificateError(.unreadable, "cannot read \(path): larger than \(maximumFileBytes) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: maximumFileBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                buffer.baseAddress.map { read(descriptor, $0 + count, buffer.count - count) } ?? 0
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                throw CertificateError(.unreadable, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumFileBytes else {
            throw CertificateError(.unreadable, "cannot read \(path): larger than \(maximumFileBytes) bytes")
        }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw CertificateError(.unreadable, "cannot read \(path): not UTF-8 text")
        }
        return try Certificate(parsing: text, source: path)
    }

    /// What indents a line: spaces and tabs.
    private static let indentation = CharacterSet(charactersIn: " \t")

    /// A value without its surrounding spaces and quotes.
    private static func value(_ text: Substring) -> String {
        let value = text.trimmingCharacters(in: .whitespaces)
        // By scalar: a quote and a combining mark after it are one `Character`, not a quote.
        let scalars = value.unicodeScalars
        if scalars.count >= 2, let first = scalars.first, first == "\"" || first == "'", scalars.last == first {
            return String(scalars.dropFirst().dropLast())
        }
        return value
    }

    private static func key(_ z85: String, _ name: String, _ source: String) throws(CertificateError) -> [UInt8] {
        guard z85.utf8.count == 40, let key = try? Z85.decode(z85), key.count == 32 else {
            throw CertificateError(.malformed, "\(source): \(name) is not 40 characters of Z85")
        }
        return key
    }

    // MARK: Writing

    /// The public file's text: metadata and the public key.
    public var publicText: String {
        text(banner: "ZeroMQ CURVE Public Certificate", withSecret: false)
    }

    /// The secret file's text, when the certificate holds its secret.
    public var secretText: String? {
        secretKey == nil ? nil : text(banner: "ZeroMQ CURVE **Secret** Certificate", withSecret: true)
    }

    /// Writes `NAME.key` and, with a secret, `NAME.key_secret` (mode 0600) into `directory`,
    /// which is created if needed; returns their paths. Existing files of that name are
    /// refused (a key replaced by mistake cannot be had back) unless `replacing`.
    @discardableResult
    public func save(named name: String, in directory: String, replacing: Bool = false) throws(CertificateError) -> (
        publicFile: String, secretFile: String?
    ) {
        let base = (directory as NSString).appendingPathComponent(name)
        let publicFile = base + ".key"
        let secretFile = secretText.map { _ in base + ".key_secret" }
        for file in [publicFile, base + ".key_secret"] where !replacing && FileManager.default.fileExists(atPath: file)
        {
            throw CertificateError(.exists, "\(file) exists")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(publicText.utf8).write(to: URL(fileURLWithPath: publicFile), options: .atomic)
            if let secretFile, let secretText {
                // Created with mode 0600 before any byte of the secret is written.
                guard
                    FileManager.default.createFile(
                        atPath: secretFile, contents: nil, attributes: [.posixPermissions: 0o600])
                else { throw CertificateError(.unwritable, "cannot create \(secretFile)") }
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile)
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: secretFile))
                defer { try? handle.close() }
                try handle.write(contentsOf: Data(secretText.utf8))
            }
        } catch let error as CertificateError {
            throw error
        } catch {
            throw CertificateError(.unwritable, "cannot write \(base): \(error.localizedDescription)")
        }
        return (publicFile, secretFile)
    }

    private func text(banner: String, withSecret: Bool) -> String {
        var lines = [
            "#   ****  Generated by quoted  ****",
            "#   \(banner)",
            withSecret
                ? "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions."
                : "#   Exchange securely, or use a secure mechanism to verify the contents of this file.",
            "",
            "metadata",
        ]
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) {
            lines.append("    \(name) = \"\(value)\"")
        }
        lines.append("curve")
        // Z85 of 32 bytes never fails.
        lines.append("    public-key = \"\((try? Z85.encode(publicKey)) ?? "")\"")
        if withSecret, let secretKey {
            lines.append("    secret-key = \"\((try? Z85.encode(secretKey)) ?? "")\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A certificate that cannot be read, parsed or written; the message names the file.
public struct CertificateError: Error, Sendable, CustomStringConvertible {
    /// What went wrong. New kinds may be added; switch with a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unreadable, malformed, unwritable, exists
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file could not be read.
        public static let unreadable = Code(.unreadable)
        /// The text is not a certificate, or its keys are wrong.
        public static let malformed = Code(.malformed)
        /// The files could not be written.
        public static let unwritable = Code(.unwritable)
        /// A file of that name exists, and replacing it was not asked for.
        public static let exists = Code(.exists)

        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// Details, naming the file.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
