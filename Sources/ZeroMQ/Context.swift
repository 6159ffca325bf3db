internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// A libzmq context: the I/O threads and the registry of sockets of one process.
///
/// A context is thread-safe and shared freely; the sockets made from it are not. Every
/// ``Socket`` keeps its context alive, so the context terminates (`zmq_ctx_term`) only after
/// the last of its sockets has closed, honouring each socket's linger. Call ``shutdown()``
/// to make every blocking call on its sockets fail at once with ``ZeroMQError/Code/terminated``.
public final class Context: @unchecked Sendable {
    // libzmq documents the context as thread-safe; the pointer is never reassigned.
    let handle: UnsafeMutableRawPointer

    /// Creates a context with `ioThreads` background I/O threads.
    ///
    /// One I/O thread moves about a gigabyte per second; raise it only for heavy traffic.
    public init(ioThreads: Int = 1) throws(ZeroMQError) {
        guard let handle = zmq_ctx_new() else { throw ZeroMQError.last("zmq_ctx_new") }
        self.handle = handle
        if ioThreads != 1 {
            guard zmq_ctx_set(handle, ZMQ_IO_THREADS, Int32(ioThreads)) == 0 else {
                let error = ZeroMQError.last("zmq_ctx_set(ZMQ_IO_THREADS)")
                zmq_ctx_term(handle)
                throw error
            }
        }
    }

    /// Makes every blocking call on this context's sockets return ``ZeroMQError/Code/terminated``.
    ///
    /// The sockets must still be closed by their owners; the context itself terminates
    /// when the last one is gone.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// The libzmq version linked at run time, such as `(4, 3, 4)`.
    public static var version: (major: Int, minor: Int, patch: Int) {
        var major: Int32 = 0
        var minor: Int32 = 0
        var patch: Int32 = 0
        zmq_version(&major, &minor, &patch)
        return (Int(major), Int(minor), Int(patch))
    }

    /// Whether the linked libzmq supports a capability such as `"curve"` or `"ipc"`.
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) != 0
    }
}
