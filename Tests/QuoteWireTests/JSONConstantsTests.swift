import Foundation
import QuoteCore
import QuoteStore
import Testing

@testable import QuoteWire

@Suite("The protocol's constants as JSON")
struct JSONConstantsTests {
    @Test("each state's constant is its name as a JSON string", arguments: QuoteStatus.allCases)
    func states(status: QuoteStatus) throws {
        #expect("\(status.jsonString)" == "\"\(status.rawValue)\"")
        #expect(try JSONDecoder().decode(String.self, from: Data("\(status.jsonString)".utf8)) == status.rawValue)
    }

    @Test("each event type's constant is its name as a JSON string", arguments: EventType.allCases)
    func eventTypes(type: EventType) throws {
        #expect("\(type.jsonString)" == "\"\(type.name)\"")
        #expect(try JSONDecoder().decode(String.self, from: Data("\(type.jsonString)".utf8)) == type.name)
    }
}
