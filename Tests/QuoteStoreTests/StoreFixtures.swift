import Foundation
import Logging
import QuoteCore
import QuoteRules
import QuoteStore
import QuoteStoreSQLite

/// A fresh directory per test, removed when the value goes away.
final class TemporaryDirectory: Sendable {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("quoted-tests-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var database: String { path + "/quoted.sqlite" }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

enum StoreFixtures {
    static let logger = Logger(label: "test.store")

    static func open(_ path: String, catalog: Catalog = .standard) throws -> SQLiteQuoteStore {
        try SQLiteQuoteStore(path: path, catalog: catalog, logger: logger)
    }

    static func submission(
        name: String = "Reza Shirazian", services: [String] = ["Oil Change"], trim: String? = "EX",
        mechanic: String? = nil
    ) -> Submission {
        Submission(
            customer: .init(name: name, email: "someone@example.com", address: "1 Main St"),
            car: .init(make: "Honda", model: "Civic", year: 2015, trim: trim),
            services: services, mechanic: mechanic)
    }

    /// A catalog of `count` mechanics of one skill, for contention.
    static func catalog(mechanics count: Int, skill: Skill = .junior) throws -> Catalog {
        try Catalog(
            services: Catalog.standard.services,
            mechanics: (1...count).map { Mechanic(id: MechanicID(Int64($0)), name: "Mechanic \($0)", skill: skill) })
    }
}

extension QuoteStore {
    /// Checks `commands` against `catalog` and applies them through the rules, as the daemon does.
    func apply(_ commands: [QuoteCommand], catalog: Catalog = .standard) async throws(StoreError)
        -> [Result<CommandOutcome, QuoteError>]
    {
        try await Rulebook().apply(commands, catalog: catalog, to: self)
    }
}
