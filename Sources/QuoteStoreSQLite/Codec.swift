import Foundation
import QuoteCore

/// How quotes and mechanics are stored in `data` columns: QuoteCore's Codable form as JSON.
enum Codec {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    static func decodeQuote(_ data: Data) throws -> Quote {
        try decoder().decode(Quote.self, from: data)
    }

    static func decodeMechanic(_ data: Data) throws -> Mechanic {
        try decoder().decode(Mechanic.self, from: data)
    }
}
