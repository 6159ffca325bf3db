import Foundation
import Logging
import PostgresNIO
import QuoteCore
import QuoteStore
import QuoteStoreCodec
import Synchronization

extension PostgresQuoteStore {
    /// The channel every commit that appends events notifies (see ``PostgresTransaction``).
    static let appendsChannel = "quoted_events"

    public var isShared: Bool { true }

    /// Listens on ``appendsChannel`` with a connection of the pool, calling `hint` for each
    /// notification of another store's commit and once each time it starts listening (what
    /// was sent while it was not is lost); when the connection fails, it listens again a
    /// second later.
    public func watchAppends(_ hint: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled, let pool = primary.pool {
            do {
                try await pool.client.withConnection { connection in
                    try await connection.listen(on: Self.appendsChannel) { notifications in
                        hint()
                        for try await notification in notifications where notification.payload != instance {
                            hint()
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.debug("not listening for other daemons' events", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
