import Foundation

/// A loopback TCP port nothing listens on now: the kernel's pick for a socket bound and closed again.
///
/// For the few tests that must know a port before its server starts: servers that name each other
/// as upstreams, a server restarted on the port its clients know, a refused connection. Another
/// process could take the port in between; on a test machine's loopback that is rare enough.
public func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw LoopbackPortUnavailable() }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
        }
    }
    guard bound else { throw LoopbackPortUnavailable() }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// No loopback port could be bound.
public struct LoopbackPortUnavailable: Error {}
