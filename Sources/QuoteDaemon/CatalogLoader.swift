import Foundation
public import QuoteCore
import Yams

/// Reads a catalog file: YAML (`.yaml`, `.yml`) or JSON (`.json`), validated on load.
public enum CatalogLoader {
    /// The catalog in the file at `path`, or the built-in one when `path` is `nil`.
    public static func load(_ path: String?) throws(CatalogLoadError) -> Catalog {
        guard let path else { return .standard }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CatalogLoadError(
                path: path, problems: [Problem(field: "file", message: "cannot be read: \(error.localizedDescription)")]
            )
        }
        let document: CatalogDocument
        do {
            if path.hasSuffix(".json") {
                document = try JSONDecoder().decode(CatalogDocument.self, from: data)
            } else {
                document = try YAMLDecoder().decode(CatalogDocument.self, from: data)
            }
        } catch {
            throw CatalogLoadError(
                path: path, problems: [Problem(field: "file", message: "is not a catalog: \(error)")])
        }
        do {
            return try document.catalog()
        } catch {
            throw CatalogLoadError(path: path, problems: error.problems)
        }
    }
}

/// A catalog file that could not be used, with every problem found in it.
public struct CatalogLoadError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let problems: [Problem]

    public var description: String {
        "invalid catalog \(path): " + problems.map(\.description).joined(separator: "; ")
    }
}
