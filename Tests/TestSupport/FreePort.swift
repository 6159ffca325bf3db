import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port free on loopback at this moment: bound with port 0, read back and closed.
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FreePortError(errno: errno) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw FreePortError(errno: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// No free port could be found.
public struct FreePortError: Error, CustomStringConvertible {
    public let errno: Int32
    public var description: String { "cannot find a free loopback port: errno \(errno)" }
}
