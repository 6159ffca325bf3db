/// The ZeroMQ Authentication Protocol (RFC 27): how libzmq asks a handler, bound at
/// ``ZAP/endpoint`` in the same context, whether a peer may complete its handshake.
///
/// The handler is a REP (or ROUTER) socket; each request is answered with
/// ``Request/reply(status:text:userId:)``. The `User-Id` of a `200` reply is attached to every
/// message the peer sends, where `Multipart.metadata["User-Id"]` reads it.
public enum ZAP {
    /// Where libzmq looks for the handler of its context.
    public static let endpoint = "inproc://zeromq.zap.01"

    /// One request: who is connecting, to which domain, and with what credentials.
    public struct Request: Sendable, Hashable {
        /// Echoed in the reply.
        public let requestID: [UInt8]
        /// The socket's `ZMQ_ZAP_DOMAIN`.
        public let domain: String
        /// The peer's address, such as `127.0.0.1`.
        public let address: String
        /// `NULL`, `PLAIN` or `CURVE`.
        public let mechanism: String
        /// The mechanism's credentials: for CURVE, the client's 32-byte public key.
        public let credentials: [[UInt8]]

        /// Parses a request's frames (after a REP socket's envelope); `nil` when they are not
        /// a version 1.0 request.
        public init?(frames: [[UInt8]]) {
            guard frames.count >= 6, frames[0] == Array("1.0".utf8) else { return nil }
            requestID = frames[1]
            domain = String(decoding: frames[2], as: UTF8.self)
            address = String(decoding: frames[3], as: UTF8.self)
            mechanism = String(decoding: frames[5], as: UTF8.self)
            credentials = Array(frames.dropFirst(6))
        }

        /// The reply's frames: `status` 200 lets the peer in under `userId`, 400 refuses it
        /// (`text` says why, for the log of the refused side), 500 is an internal error.
        public func reply(status: Int, text: String, userId: String = "") -> [[UInt8]] {
            [Array("1.0".utf8), requestID, Array(String(status).utf8), Array(text.utf8), Array(userId.utf8), []]
        }
    }
}
