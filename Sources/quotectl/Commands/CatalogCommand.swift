import ArgumentParser
import CatalogFile
import Foundation
import QuoteClient
import QuoteCore
import QuoteWire

/// `quotectl catalog show|apply`: the catalog in force, and putting a catalog file in force
/// on every daemon of the store at once.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog", abstract: "Show the catalog in force, or apply a catalog file.",
        subcommands: [Show.self, Apply.self])

    /// `quotectl catalog show`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the catalog in force with its version (--json: as a catalog file holds it).")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await global.show(.catalog) { answer, output in
                guard case .catalog(let document, let version, let truncated) = answer else { return }
                output.line("catalog version \(version), in \(document.currency ?? "USD")")
                output.table(
                    ["SERVICE", "MINIMUM SKILL", "PRICE"],
                    document.services.map { [$0.name, $0.minimumSkill, $0.price ?? "-"] })
                output.table(
                    ["ID", "MECHANIC", "SKILL"], document.mechanics.map { [String($0.id), $0.name, $0.skill] })
                if truncated {
                    output.line("(more mechanics than one reply holds: `quotectl mechanics` lists them all)")
                }
                let coupons = document.coupons ?? []
                if !coupons.isEmpty {
                    output.table(
                        ["COUPON", "OFF", "EXPIRES"],
                        coupons.map { coupon in
                            [
                                coupon.code, coupon.percentOff.map { "\($0)%" } ?? coupon.amountOff ?? "-",
                                coupon.expires ?? "never",
                            ]
                        })
                }
            }
        }
    }

    /// `quotectl catalog apply FILE [--dry-run]`.
    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a catalog file in force, as one change, on every daemon of the store.",
            discussion: """
                The file (YAML, or JSON when it ends in .json) is checked first and every problem is listed. \
                Then the difference from the catalog in force is shown: + added, - removed (a mechanic \
                retired), ~ changed. With --dry-run, nothing more; otherwise the catalog is applied, and \
                each mechanic added, changed or retired is announced, then catalog.applied.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The catalog file.", completion: .file(extensions: ["yaml", "yml", "json"])) var file: String
        @Flag(help: "Show the difference only; change nothing.") var dryRun = false

        func run() async throws {
            let document: CatalogDocument
            do {
                document = try CatalogLoader.document(at: file)
            } catch {
                throw QuotedError(.usage, error.description)
            }
            let catalog: Catalog
            do {
                catalog = try document.catalog()
            } catch {
                throw QuotedError(
                    .usage,
                    "\(file) is not a valid catalog:\n" + error.problems.map { "  \($0)" }.joined(separator: "\n"))
            }
            try await global.withQuoted { (quoted, output) throws(QuotedError) in
                let current = try await quoted.checked(.catalog)
                guard case .catalog(let inForce, let version, let truncated) = try current.answer(to: .catalog) else {
                    return
                }
                let changes: [String]
                do {
                    changes = try inForce.catalog().difference(to: catalog)
                } catch {
                    throw QuotedError(.internal, "quoted sent a catalog that does not read back: \(error)")
                }
                if truncated {
                    output.errorLine(
                        "quotectl: the catalog in force has more mechanics than one reply holds; its difference from \(file) is not shown"
                    )
                } else if !output.json {
                    output.line(
                        changes.isEmpty
                            ? "no difference from the catalog in force (version \(version))"
                            : "against the catalog in force (version \(version)):")
                    for change in changes { output.line("  \(change)") }
                }
                guard !dryRun else {
                    if output.json { output.reply(current) }
                    return
                }
                let request = Request.applyCatalog(document)
                let reply = try await quoted.checked(request)
                if output.json { return output.reply(reply) }
                guard case .catalogApplied(let version, _) = try reply.answer(to: request) else { return }
                output.line("catalog version \(version) in force")
            }
        }
    }
}
