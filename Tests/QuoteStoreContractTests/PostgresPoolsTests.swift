import Logging
import PostgresNIO
import QuoteCore
import QuoteStore
import ServiceLifecycle
import TestSupport
import Testing

@testable import QuoteStorePostgres

/// The service that runs the stores' connection pools, with stores on a real server.
@Suite("The PostgreSQL pools service")
struct PostgresPoolsTests {
    private static let logger = Logger(label: "test.pools")

    @Test(
        "a store's pool runs inside the service until the store closes; graceful shutdown ends the service with every pool, and a pool started after it never runs",
        .timeLimit(.minutes(3)))
    func poolsRunInsideTheService() async throws {
        var configuration = try PostgresQuoteStore.Configuration(url: PostgresCluster.start().createDatabase())
        configuration.acquireTimeout = .seconds(5)
        let pools = PostgresPools()
        let group = ServiceGroup(configuration: .init(services: [pools], logger: Self.logger))
        try await withThrowingTaskGroup { tasks in
            tasks.addTask { try await group.run() }
            func open() async throws -> PostgresQuoteStore {
                try await PostgresQuoteStore.open(
                    configuration: configuration, catalog: .standard, pools: pools, logger: Self.logger)
            }

            let closed = try await open()
            #expect(try await closed.catalog().mechanics == Catalog.standard.mechanics)
            closed.close()
            await #expect(throws: StoreError.self) { try await closed.catalog() }

            let kept = try await open()
            #expect(try await kept.catalog().mechanics == Catalog.standard.mechanics)
            await group.triggerGracefulShutdown()
            // The service returns once every pool it runs has ended.
            try await tasks.next()
            await #expect(throws: StoreError.self) { try await kept.catalog() }
            let late = PostgresClient(
                configuration: configuration.client(on: configuration.hosts[0]), backgroundLogger: Self.logger)
            #expect(await pools.start(late) == nil)
        }
    }
}
