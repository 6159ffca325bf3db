import Foundation
import NIOCore
import NIOPosix
import Threads

/// The threads on which the PostgreSQL stores of a process do their work, one for each store:
/// every connection of its pools reads and writes there, and a caller that runs its loop there
/// (``PostgresQuoteStore/executor``) reaches a connection, and gets its answers, without waking
/// another thread.
///
/// A batch is a chain of statements, each awaited before the next. On NIO's shared group, the
/// daemon's store loop, the cooperative pool and the connection's event loop are three
/// threads: every step of the chain woke another, and on two busy cores each wake-up waits for
/// a core. One thread does a store's part of a daemon's work, the rules and the statements'
/// encoding included: a fraction of a core, and never more than one. A daemon has one store;
/// a process with several (the tests) spreads them over as many threads as cores.
enum StoreEventLoop {
    /// Started on first use, and kept for the life of the process, as NIO's own shared group;
    /// its threads are `quoted-pg` (`top -H`, `perf`).
    static let group: MultiThreadedEventLoopGroup = {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        for loop in group.makeIterator() {
            loop.execute { Thread.nameCurrentThread("quoted-pg") }
        }
        return group
    }()
}
