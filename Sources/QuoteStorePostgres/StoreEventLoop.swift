import Foundation
import NIOCore
import NIOPosix
import Threads

/// The one thread on which the PostgreSQL stores of a process do their work: every connection
/// of their pools reads and writes there, and a caller that runs its loop there
/// (``PostgresQuoteStore/executor``) reaches a connection, and gets its answers, without waking
/// another thread.
///
/// A batch is a chain of statements, each awaited before the next. On NIO's shared group,
/// the daemon's store loop, the cooperative pool and the connection's event loop are three
/// threads: every step of the chain woke another, and on two busy cores each wake-up waits for
/// a core. One thread does the store's part of a daemon's work, the rules and the statements'
/// encoding included: a fraction of a core, and never more than one.
enum StoreEventLoop {
    /// Started on first use, and kept for the life of the process, as NIO's own shared group;
    /// its thread is `quoted-pg` (`top -H`, `perf`).
    static let group: MultiThreadedEventLoopGroup = {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        group.next().execute { Thread.nameCurrentThread("quoted-pg") }
        return group
    }()

    /// Runs a task's jobs on the group's thread.
    static let executor = EventLoopTaskExecutor(group.next())
}
