import Foundation
public import QuoteCore
import Yams

/// Reads a catalog file, YAML (`.yaml`, `.yml`) or JSON (`.json`): the daemon seeds its store
/// from one, and `quotectl catalog apply` sends one, read the same way.
public enum CatalogLoader {
    /// The catalog in the file at `path`, validated; the built-in one when `path` is `nil`.
    public static func load(_ path: String?) throws(CatalogLoadError) -> Catalog {
        guard let path else { return .standard }
        let document = try document(at: path)
        do {
            return try document.catalog()
        } catch {
            throw CatalogLoadError(path: path, problems: error.problems)
        }
    }

    /// The catalog in the file at `path` as written, not yet validated (`CatalogDocument.catalog()`
    /// says every problem at its path).
    public static func document(at path: String) throws(CatalogLoadError) -> CatalogDocument {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CatalogLoadError(
                path: path, problems: [Problem(field: "file", message: "cannot be read: \(error.localizedDescription)")]
            )
        }
        do {
            if path.hasSuffix(".json") {
                return try JSONDecoder().decode(CatalogDocument.self, from: data)
            }
            return try YAMLDecoder().decode(CatalogDocument.self, from: data)
        } catch {
            throw CatalogLoadError(
                path: path, problems: [Problem(field: "file", message: "is not a catalog: \(error)")])
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
