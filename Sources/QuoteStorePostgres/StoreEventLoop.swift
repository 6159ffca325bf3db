import Foundation
import NIOCore
import NIOPosix
import Threads

/// The thread on which a PostgreSQL store does its work: every connection of its pools reads
/// and writes there, and a caller that runs its loop there (``PostgresQuoteStore/executor``)
/// reaches a connection, and gets its answers, without waking another thread.
///
/// A batch is a chain of statements, each awaited before the next. On NIO's shared group, the
/// daemon's store loop, the cooperative pool and the connection's event loop are three
/// threads: every step of the chain woke another, and on two busy cores each wake-up waits for
/// a core. One thread does a store's part of a daemon's work, the rules and the statements'
/// encoding included: a fraction of a core, and never more than one. Each store has its own,
/// so that in a process with several (the tests) one store's long batch never holds up
/// another's statements.
enum StoreEventLoop {
    /// A group of one thread, named `quoted-pg` (`top -H`, `perf`), for one store; the store
    /// shuts it down when it closes.
    static func makeGroup() -> MultiThreadedEventLoopGroup {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        group.next().execute { Thread.nameCurrentThread("quoted-pg") }
        return group
    }
}
