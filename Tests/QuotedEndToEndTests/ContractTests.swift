import Foundation
import TestSupport
import Testing

/// The machine-readable contract: `scripts/check-contract` checks the schemas and the
/// AsyncAPI document with validators' meta-schema checks, and mutates sample messages of every
/// kind, each mutation to be refused. (`scripts/test` runs it again over every message the
/// end-to-end tests exchanged.)
@Suite("The contract documents")
struct ContractTests {
    @Test("The schemas and the AsyncAPI document are valid, and every mutation of a valid message is refused")
    func documentsAndMutations() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let run = try Binaries.run(
            absolute: Python.executable, [root.appendingPathComponent("scripts/check-contract").path])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for schema in ["definitions", "request", "reply", "event"] {
            #expect(run.stdout.contains("\(schema).schema.json: a valid JSON Schema 2020-12 document"), "\(run.stdout)")
        }
        #expect(run.stdout.contains("docs/asyncapi.yaml: a valid AsyncAPI 3.0 document over the three schemas"))
        #expect(run.stdout.contains("(jsonschema): 13 samples valid; 34 mutations"), "\(run.stdout)")
        #expect(run.stdout.contains("(jsonschema-rs): 13 samples valid; 34 mutations"), "\(run.stdout)")
    }
}
