import NIOCore

/// Runs a task's jobs on a connection's event loop, the thread that reads and writes the
/// connection's socket.
///
/// A transaction is a chain of statements, each awaited before the next is sent. Left on the
/// cooperative pool, every statement crosses threads twice: its query is handed to the event
/// loop to be written, and its result is handed back to the pool to resume the task. On two
/// busy cores each crossing waits for a thread to wake and find a core. With this executor
/// preferred (`withTaskExecutorPreference`), the task runs where the connection's I/O already
/// happens: a query is written as soon as it is made, and the task resumes as soon as its result
/// is read.
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
