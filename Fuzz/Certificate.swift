// Fuzz target `certificate`: a CURVE certificate's text (czmq zcert), as quoted reads its own
// key and its clients directory. Any text must parse or throw, never trap; what parses must
// write out as text that parses back to the same certificate.
import Foundation
import ZeroMQ

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let certificate: Certificate
    do {
        certificate = try Certificate(parsing: text, source: "fuzz.key")
    } catch {
        _ = error.message
        return 0
    }
    roundTrip(certificate.publicText, certificate.publicCertificate)
    if let secretText = certificate.secretText { roundTrip(secretText, certificate) }
    return 0
}

private func roundTrip(_ text: String, _ expected: Certificate) {
    do {
        let read = try Certificate(parsing: text, source: "written.key")
        guard read == expected else {
            fatalError(
                "a written certificate reads back different: \(text.debugDescription), \(expected) read as \(read)")
        }
    } catch {
        fatalError("a written certificate does not read back (\(error)): \(text.debugDescription)")
    }
}
