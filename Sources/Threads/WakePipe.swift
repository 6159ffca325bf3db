import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe that wakes the I/O thread: a part working elsewhere writes a byte when it has
/// something for the thread, whose poller watches ``readDescriptor`` beside its sockets.
/// Both ends are non-blocking: a full pipe already says "something is there".
public final class WakePipe: Sendable {
    /// Readable while a wake-up has not been taken.
    public let readDescriptor: Int32
    private let writeDescriptor: Int32

    public init() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = ends[0]
        writeDescriptor = ends[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Makes ``readDescriptor`` readable; from any thread.
    public func signal() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Takes every wake-up written so far (on the I/O thread, before it takes the work).
    public func drain() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(readDescriptor, &bytes, bytes.count) > 0 {}
    }
}
