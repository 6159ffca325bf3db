import Testing

@testable import QuoteCore

@Suite("A submission's fingerprint, which quotes keep")
struct SubmissionDigestTests {
    /// Each value was computed by the first release's hash. A stored quote keeps its
    /// fingerprint, and a retry is matched against it: a change of the hash would turn every
    /// retry of an earlier submission into a conflict.
    @Test(
        "a submission's fingerprint is the one earlier releases stored",
        arguments: [
            (
                Submission(
                    customer: .init(name: "Bench Customer", email: "bench@example.com", address: "1 Loop Road"),
                    car: .init(make: "Toyota", model: "Camry", year: 2015, trim: "LE"),
                    services: ["Oil Change", "Brake Inspection"]),
                false, false, UInt64(17_463_429_834_049_914_771)
            ),
            (
                Submission(
                    customer: .init(name: "Zoë Ångström", email: "zoe@exämple.org", address: "12345678"),
                    car: .init(make: "Škoda", model: "Octavia Combi", year: -3, trim: nil),
                    services: ["x", "exactly 16 bytes", "seventeen bytes.."], mechanic: "Sam Lee", coupon: "SAVE10"),
                true, true, 14_587_449_321_241_706_693
            ),
            (Submission(), false, true, 2_179_682_739_358_621_643),
        ])
    func fingerprintIsStable(_ submission: Submission, book: Bool, wait: Bool, expected: UInt64) {
        #expect(SubmissionDigest(submission, book: book, wait: wait).rawValue == expected)
    }

    @Test("a text that differs in one byte, at any place and length, changes the fingerprint")
    func everyByteCounts() {
        for length in 1...24 {
            let text = String(repeating: "a", count: length)
            let digest = SubmissionDigest(Submission(mechanic: text), book: false, wait: false)
            for index in 0..<length {
                var bytes = Array(text.utf8)
                bytes[index] = UInt8(ascii: "b")
                let changed = Submission(mechanic: String(decoding: bytes, as: UTF8.self))
                #expect(
                    SubmissionDigest(changed, book: false, wait: false) != digest, "length \(length), byte \(index)")
            }
            #expect(SubmissionDigest(Submission(mechanic: text + "a"), book: false, wait: false) != digest)
        }
    }
}
