import Foundation
import QuoteCore

@testable import QuoteWire

// The `Codable` reading of a request frame: the oracle `RequestParser` (the daemon's hand
// parser) is compared against on valid and broken frames. Production never decodes a request
// this way; it lives with the tests that use it.

extension WireCodec {
    /// ``decodeRequest(_:)`` through `JSONDecoder`: the reference the hand parser is tested
    /// against.
    func decodeRequestWithFoundation(_ bytes: [UInt8]) -> Result<WireRequest, WireError> {
        do {
            let request = try JSONDecoder().decode(FoundationRequest.self, from: Data(bytes)).request
            if let error = request.textError() { return .failure(error) }
            return .success(request)
        } catch let error as DecodingError {
            return .failure(FoundationRequest.wireError(error))
        } catch {
            return .failure(WireError(code: .invalidJSON, message: "the request is not valid JSON"))
        }
    }
}

extension WireRequest {
    /// The request with its catalog's bytes read as a document, as ``action(currency:)``
    /// reads them: what the `JSONDecoder` path, which reads them at once, is compared with.
    var comparable: WireRequest {
        guard let json = catalogJSON else { return self }
        var request = self
        request.catalog = WireRequest.catalogDocument(json).document
        request.catalogJSON = nil
        return request
    }
}

/// A request read by `JSONDecoder`, only the keys the frame has, with the same presence record
/// the hand parser keeps.
struct FoundationRequest: Decodable {
    var request: WireRequest

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: WireRequest.CodingKeys.self)
        var request = WireRequest()
        for key in container.allKeys {
            switch key {
            case .v: request.v = try container.decodeWholeNumberIfPresent(forKey: key).map { Int($0) }
            case .op: request.op = try container.decodeIfPresent(String.self, forKey: key)
            case .id: request.id = try container.decodeIfPresent(RequestID.self, forKey: key)
            case .customer:
                // `list`'s is a search text, `submit`'s an object.
                if let search = try? container.decodeIfPresent(String.self, forKey: key) {
                    request.customerSearch = search
                } else {
                    request.customer = try container.decodeIfPresent(Submission.CustomerInput.self, forKey: key)
                }
            case .car: request.car = try container.decodeIfPresent(Submission.CarInput.self, forKey: key)
            case .services: request.services = try container.decodeIfPresent([String].self, forKey: key)
            case .mechanic: request.mechanic = try container.decodeIfPresent(String.self, forKey: key)
            case .coupon: request.coupon = try container.decodeIfPresent(String.self, forKey: key)
            case .idempotencyKey: request.idempotencyKey = try container.decodeIfPresent(String.self, forKey: key)
            case .book: request.book = try container.decodeIfPresent(Bool.self, forKey: key)
            case .wait: request.wait = try container.decodeIfPresent(Bool.self, forKey: key)
            case .quoteId: request.quoteId = try container.decodeWholeNumberIfPresent(forKey: key)
            case .state: request.state = try container.decodeIfPresent(String.self, forKey: key)
            case .after: request.after = try container.decodeWholeNumberIfPresent(forKey: key)
            case .limit: request.limit = try container.decodeWholeNumberIfPresent(forKey: key).map { Int($0) }
            case .year: request.year = try container.decodeWholeNumberIfPresent(forKey: key).map { Int($0) }
            case .trim: request.trim = try container.decodeIfPresent(String.self, forKey: key)
            case .make: request.make = try container.decodeIfPresent(String.self, forKey: key)
            case .model: request.model = try container.decodeIfPresent(String.self, forKey: key)
            case .price: request.price = try container.decodeIfPresent(String.self, forKey: key)
            case .priceCents: request.priceCents = try container.decodeWholeNumberIfPresent(forKey: key)
            case .reason: request.reason = try container.decodeIfPresent(String.self, forKey: key)
            case .since: request.since = try container.decodeWholeNumberIfPresent(forKey: key)
            case .free: request.free = try container.decodeIfPresent(Bool.self, forKey: key)
            case .skill: request.skill = try container.decodeIfPresent(String.self, forKey: key)
            case .onDuty: request.onDuty = try container.decodeIfPresent(Bool.self, forKey: key)
            case .name: request.name = try container.decodeIfPresent(String.self, forKey: key)
            case .catalog:
                // Any object is taken (and read as a catalog only by `action`); anything else
                // is refused at `catalog` itself, as the hand parser does.
                guard try !container.decodeNil(forKey: key) else { break }
                guard (try? container.nestedContainer(keyedBy: WireRequest.CodingKeys.self, forKey: key)) != nil else {
                    throw DecodingError.typeMismatch(
                        CatalogDocument.self,
                        .init(codingPath: container.codingPath + [key], debugDescription: "not a catalog"))
                }
                request.catalog = try? container.decode(CatalogDocument.self, forKey: key)
            }
        }
        request.presence = (try? WireRequest.Presence(decoder)) ?? WireRequest.Presence()
        self.request = request
    }

    /// A decoding error as the reply the daemon would send.
    static func wireError(_ error: DecodingError) -> WireError {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.reduce("") { path, key in
                if let index = key.intValue { return path + "[\(index)]" }
                return path.isEmpty ? key.stringValue : path + "." + key.stringValue
            }
        }
        switch error {
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            if context.codingPath.isEmpty {
                return WireError(code: .invalidRequest, message: "the request must be a JSON object")
            }
            return WireError(
                code: .invalidRequest, message: "\(field) has the wrong type",
                problems: [.init(field: field, message: "must be \(describe(type))")])
        case .valueNotFound(let type, let context):
            let field = path(context.codingPath)
            return WireError(
                code: .invalidRequest, message: "\(field) is null",
                problems: [.init(field: field, message: "must be \(describe(type)), not null")])
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key])
            return WireError(
                code: .invalidRequest, message: "\(field) is required",
                problems: [.init(field: field, message: "is required")])
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return WireError(code: .invalidJSON, message: "the request is not valid JSON")
            }
            let field = path(context.codingPath)
            return WireError(
                code: .invalidRequest, message: "\(field) is invalid",
                problems: [.init(field: field, message: context.debugDescription)])
        @unknown default:
            return WireError(code: .invalidRequest, message: "the request could not be read")
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "true or false"
        case is [String].Type, is [Any].Type: "an array"
        case is CatalogDocument.Type: "a catalog object"
        default: "\(type)"
        }
    }
}

extension WireRequest.Presence {
    /// Any key, to list those the protocol does not have.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The keys of the object `decoder` reads, and of its `customer` and `car` objects.
    init(_ decoder: any Decoder) throws {
        self.init()
        let all = try decoder.container(keyedBy: AnyKey.self)
        var nested: String?
        for key in all.allKeys {
            if let field = WireRequest.Fields(name: key.stringValue) {
                fields.insert(field)
                guard field == .customer || field == .car,
                    let object = try? all.nestedContainer(keyedBy: AnyKey.self, forKey: key)
                else { continue }
                let known = field == .customer ? ["name", "email", "address"] : ["make", "model", "year", "trim"]
                for inner in object.allKeys where !known.contains(inner.stringValue) {
                    let name = (field == .customer ? "customer." : "car.") + inner.stringValue
                    if nested.map({ WireRequest.precedes(name, $0) }) ?? true { nested = name }
                }
            } else if unknown.map({ WireRequest.precedes(key.stringValue, $0) }) ?? true {
                unknown = key.stringValue
            }
        }
        if unknown == nil { unknown = nested }
    }
}
