internal import CZeroMQ

#if canImport(Glibc)
    import Glibc
#endif

/// An error reported by libzmq, carrying the `errno` it set and libzmq's own text for it.
///
/// Callers branch on ``code`` (a timeout is routine, a terminated context means "stop"),
/// and log ``description``. New codes can be added without breaking callers because
/// ``Code`` is a struct over a private enum.
public struct ZeroMQError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The kind of failure, stable across libzmq versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case timeout
            case terminated
            case interrupted
            case invalidArgument
            case hostUnreachable
            case addressInUse
            case addressNotAvailable
            case protocolNotSupported
            case notSupported
            case invalidState
            case tooManyOpenFiles
            case noDevice
            case other
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The operation would block: `EAGAIN` on a non-blocking call, or a send/receive timeout.
        public static let timeout = Code(.timeout)
        /// The context was shut down or terminated (`ETERM`): the owner should close its sockets.
        public static let terminated = Code(.terminated)
        /// A signal interrupted the call (`EINTR`); blocking calls retry this themselves.
        public static let interrupted = Code(.interrupted)
        /// An argument was rejected (`EINVAL`), such as a malformed endpoint or option value.
        public static let invalidArgument = Code(.invalidArgument)
        /// A ROUTER with mandatory routing could not reach the peer (`EHOSTUNREACH`).
        public static let hostUnreachable = Code(.hostUnreachable)
        /// The endpoint is already bound by someone else (`EADDRINUSE`).
        public static let addressInUse = Code(.addressInUse)
        /// The endpoint names an address that is not local (`EADDRNOTAVAIL`).
        public static let addressNotAvailable = Code(.addressNotAvailable)
        /// The endpoint's transport is unknown or unsupported (`EPROTONOSUPPORT`).
        public static let protocolNotSupported = Code(.protocolNotSupported)
        /// The socket type does not support the operation (`ENOTSUP`).
        public static let notSupported = Code(.notSupported)
        /// The socket is not in a state that allows the operation (`EFSM`), e.g. REQ sending twice.
        public static let invalidState = Code(.invalidState)
        /// The process or context ran out of sockets or descriptors (`EMFILE`).
        public static let tooManyOpenFiles = Code(.tooManyOpenFiles)
        /// The endpoint's interface does not exist (`ENODEV`).
        public static let noDevice = Code(.noDevice)
        /// Any other errno; see ``ZeroMQError/errno``.
        public static let other = Code(.other)

        init(errno value: Int32) {
            switch value {
            case EAGAIN: self = .timeout
            case ETERM: self = .terminated
            case EINTR: self = .interrupted
            case EINVAL: self = .invalidArgument
            case EHOSTUNREACH: self = .hostUnreachable
            case EADDRINUSE: self = .addressInUse
            case EADDRNOTAVAIL: self = .addressNotAvailable
            case EPROTONOSUPPORT: self = .protocolNotSupported
            case ENOTSUP: self = .notSupported
            case EFSM: self = .invalidState
            case EMFILE: self = .tooManyOpenFiles
            case ENODEV: self = .noDevice
            default: self = .other
            }
        }

        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The raw `errno` value libzmq reported.
    public let errno: Int32
    /// `zmq_strerror(errno)`: libzmq's words for the failure.
    public let message: String
    /// The call that failed, such as `zmq_bind(tcp://127.0.0.1:5555)`.
    public let operation: String

    /// Builds an error from an explicit errno, for the call named by `operation`.
    public init(errno value: Int32, operation: String) {
        self.code = Code(errno: value)
        self.errno = value
        self.message = String(cString: zmq_strerror(value))
        self.operation = operation
    }

    /// Builds an error from the errno libzmq left behind after a failed call.
    static func last(_ operation: @autoclosure () -> String) -> ZeroMQError {
        ZeroMQError(errno: zmq_errno(), operation: operation())
    }

    public var description: String {
        "\(operation): \(message) (errno \(errno), \(code))"
    }

    public static func == (lhs: ZeroMQError, rhs: ZeroMQError) -> Bool {
        lhs.errno == rhs.errno && lhs.operation == rhs.operation
    }
}
