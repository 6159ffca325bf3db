import Foundation
import QuoteCore
public import QuoteRules

/// The first stage: where a message enters. It splits the ROUTER envelope from the body,
/// bounds its size, parses the JSON, authorizes the caller's role, validates the request and
/// checks a command against the batch's catalog (`Rulebook.check(_:in:at:by:)`), and adds
/// the outcome to the batch being received: a checked write, a read, or a refusal whose reply
/// is written at once (it never waits for a commit). One decoder per thread: it reuses its
/// codec.
public struct RequestDecoder {
    /// The most identity frames an envelope may carry before its delimiter: one per
    /// ROUTER/DEALER hop between the client and quoted.
    public static let maximumEnvelopeDepth = 16
    /// The frames of a message worth reading: one more than any request has (its envelope,
    /// the empty delimiter, the body), so that a longer message, cut there, is still refused.
    public static let maximumFrames = maximumEnvelopeDepth + 3

    /// The largest request body answered; a larger one is refused with `message_too_large`.
    public let maxMessageBytes: Int
    /// The allow-list every request's key and role are checked against; `nil` without
    /// `security`, when every caller is anonymous and may do everything.
    public let callers: (any CallerDirectory)?
    private let codec = WireCodec()
    private let rulebook: Rulebook

    /// A decoder refusing bodies over `maxMessageBytes`, authorizing callers with `callers`;
    /// with `sharedStore`, for a daemon whose store other daemons write too (a name its
    /// catalog does not know is looked up again in the transaction).
    public init(maxMessageBytes: Int, callers: (any CallerDirectory)? = nil, sharedStore: Bool = false) {
        self.maxMessageBytes = maxMessageBytes
        self.callers = callers
        rulebook = Rulebook(sharedStore: sharedStore)
    }

    /// Decodes the message `frames` received at `received` from the connection ZAP named
    /// `userId`, and adds it to `batch`. Given `frames` alone, the array becomes the reply's
    /// envelope in place, without a copy.
    public func decode(
        _ frames: consuming [[UInt8]], userId: String?, receivedAt received: ContinuousClock.Instant = .now,
        into batch: inout RequestBatch<RequestTicket>
    ) {
        switch decode(consume frames, userId: userId, catalog: batch.catalog, at: batch.started) {
        case .write(let ticket, let request):
            batch.append(RequestTicket(ticket, received: received), write: request)
        case .read(let ticket, let request):
            batch.append(RequestTicket(ticket, received: received), read: request)
        case .refused(let ticket, let error):
            var refused = RequestTicket(ticket, received: received)
            refused.code = error.code
            // An envelope that cannot be answered (too deep, too large) gets no reply.
            if !ticket.envelope.isEmpty { refused.refusal = codec.encode(WireReply.failure(ticket.id, error)) }
            batch.append(refused)
        }
    }

    /// Where a request is answered from, with what the reply needs.
    fileprivate struct Address {
        var envelope: [[UInt8]]
        var id: RequestID? = nil
        var op: Operation? = nil
    }

    private enum Decoded {
        case write(Address, CheckedRequest)
        case read(Address, ReadRequest)
        case refused(Address, WireError)
    }

    /// Splits the ROUTER envelope from the body and decodes the request.
    ///
    /// The envelope is every frame up to and including the first empty one (the delimiter),
    /// however many identities brokers on the way added: `[identity, "", body]` from a REQ
    /// or a DEALER that sends the delimiter, `[proxy, identity, "", body]` through a
    /// ROUTER/DEALER proxy. Without a delimiter, `[identity, body]` (a DEALER that sends
    /// none). The reply goes back on the same envelope, so a malformed message is still
    /// answered.
    private func decode(_ message: consuming [[UInt8]], userId: String?, catalog: Catalog, at now: Date) -> Decoded {
        var frames = message
        let envelope: [[UInt8]]
        let body: [UInt8]
        if let delimiter = frames.dropFirst().firstIndex(where: { $0.isEmpty }) {
            // Identities are at most 255 bytes (ZMQ_ROUTING_ID), and no broker path is
            // deeper than a few hops: a larger envelope is not answered (it would be copied
            // into the reply) and is dropped.
            guard delimiter <= Self.maximumEnvelopeDepth, frames[..<delimiter].allSatisfy({ $0.count <= 255 })
            else {
                return .refused(
                    Address(envelope: []),
                    WireError(code: .malformedEnvelope, message: "envelope too deep or too large"))
            }
            let after = frames.count - delimiter - 1
            guard after == 1 else {
                return .refused(
                    Address(envelope: Array(frames[...delimiter])),
                    WireError(
                        code: .malformedEnvelope,
                        message:
                            "expected one JSON frame after the envelope's empty delimiter (frame \(delimiter + 1) of \(frames.count)), got \(after)"
                    ))
            }
            // The body is the last frame: what is left is the envelope, in the same array
            // (the reply's frames, once the body is appended to it).
            body = frames.removeLast()
            envelope = frames
        } else if frames.count == 2 && !frames[1].isEmpty && frames[0].count <= 255 {
            body = frames.removeLast()
            envelope = frames
        } else {
            return .refused(
                Address(envelope: Array(frames.prefix(1))),
                WireError(
                    code: .malformedEnvelope,
                    message:
                        "expected the envelope to end in an empty delimiter frame, then one JSON frame; got \(max(frames.count - 1, 0)) frames after the identity and no delimiter"
                ))
        }
        guard body.count <= maxMessageBytes else {
            return .refused(
                Address(envelope: envelope),
                WireError(
                    code: .messageTooLarge,
                    message: "the request has \(body.count) bytes; the limit is \(maxMessageBytes)"))
        }
        var request = WireRequest()
        let (refusal, id) = codec.decodeRequest(body, into: &request)
        if let refusal { return .refused(Address(envelope: envelope, id: id), refusal) }
        let address = Address(
            envelope: envelope, id: request.id, op: request.op.flatMap(Operation.init(rawValue:)))
        let actor: Actor
        switch authorize(address.op, userId: userId) {
        case .success(let authorized): actor = authorized
        case .failure(let error): return .refused(address, error)
        }
        let action: RequestAction
        do {
            action = try request.takeAction(currency: catalog.currency)
        } catch {
            return .refused(address, error)
        }
        switch action {
        case .read(let query):
            return .read(address, ReadRequest(.query(query), by: actor))
        case .write(let command):
            switch rulebook.admit(command, in: catalog, at: now, by: actor) {
            case .write(let checked): return .write(address, checked)
            case .replay(let read, _): return .read(address, read)
            case .refused(let refusal): return .refused(address, WireError(refusal))
            }
        }
    }

    /// Who sends a request for `operation`, and how far they reach with it: without
    /// `security`, anyone, everywhere; with it, the listed client of the connection's key
    /// (`userId`, set by the ZAP handler), as its role allows. A key withdrawn since it
    /// connected, or an operation its role does not allow, is `forbidden`.
    private func authorize(_ operation: Operation?, userId: String?) -> Result<Actor, WireError> {
        guard let callers else { return .success(.anonymous) }
        guard let caller = callers.caller(userId: userId) else {
            return .failure(
                WireError(
                    code: .forbidden,
                    message: "this key is no longer in the clients directory; nothing was applied"))
        }
        // An unknown operation is for the request's own validation to refuse.
        guard let operation else { return .success(Actor(name: caller.name)) }
        switch caller.role.access(to: operation) {
        case .denied:
            return .failure(
                WireError(
                    code: .forbidden,
                    message: "the \(caller.role) role may not use \"\(operation.rawValue)\"; nothing was applied"))
        case .granted:
            return .success(Actor(name: caller.name))
        case .ownQuotes:
            return .success(Actor(name: caller.name, ownQuotesOnly: true))
        }
    }
}

extension RequestTicket {
    fileprivate init(_ address: RequestDecoder.Address, received: ContinuousClock.Instant) {
        self.init(envelope: address.envelope, id: address.id, op: address.op, received: received)
    }
}
