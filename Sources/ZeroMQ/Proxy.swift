internal import CZeroMQ

/// Shuttles messages between two sockets until the context terminates (`zmq_proxy`):
/// the XSUB/XPUB forwarder for fanning events out to many subscribers.
public func proxy(frontend: borrowing Socket, backend: borrowing Socket) throws(ZeroMQError) {
    guard zmq_proxy(frontend.handle, backend.handle, nil) == 0 else { throw ZeroMQError.last("zmq_proxy") }
}
