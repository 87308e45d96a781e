import Foundation
import Synchronization

/// A loopback TCP port nothing listens on now: the kernel's pick for a socket bound and closed again.
///
/// For the few tests that must know a port before its server starts: servers that name each other
/// as upstreams, a server restarted on the port its clients know, a refused connection. Another
/// process could take the port in between; on a test machine's loopback that is rare enough.
public func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw LoopbackPortUnavailable() }
    defer { close(descriptor) }
    guard let port = bindToLoopback(descriptor) else { throw LoopbackPortUnavailable() }
    return port
}

/// No loopback port could be bound.
public struct LoopbackPortUnavailable: Error {}

/// Binds `descriptor` to 127.0.0.1 on a port the kernel picks, and listens with `backlog` when one
/// is given; the port, or `nil` when a step failed.
private func bindToLoopback(_ descriptor: Int32, listenBacklog backlog: Int32? = nil) -> Int? {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, length) == 0 && (backlog.map { listen(descriptor, $0) == 0 } ?? true)
                && getsockname(descriptor, $0, &length) == 0
        }
    }
    return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
}

/// A loopback listener that never accepts: the kernel completes connections to it and queues them
/// unread, as it does for a server whose listener is about to close. ``close()`` resets every
/// queued connection, as a server's closing listener does.
///
/// For tests of what a client does before a server has taken its connection.
public final class SilentListener: Sendable {
    /// The port it listens on.
    public let port: Int
    private let descriptor: Mutex<Int32>

    /// Listens on 127.0.0.1 on a port the kernel picks.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoopbackPortUnavailable() }
        guard let port = bindToLoopback(descriptor, listenBacklog: 16) else {
            Foundation.close(descriptor)
            throw LoopbackPortUnavailable()
        }
        self.port = port
        self.descriptor = Mutex(descriptor)
    }

    deinit { close() }

    /// Connections the kernel has completed and queued for an accept that never comes (Linux gives
    /// a listener's accept queue length in `TCP_INFO`); 0 once closed.
    public var queuedConnections: Int {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return 0 }
            var info = tcp_info()
            var length = socklen_t(MemoryLayout<tcp_info>.size)
            guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return 0 }
            return Int(info.tcpi_unacked)
        }
    }

    /// Closes the listener: the kernel resets the connections it had queued.
    public func close() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { Foundation.close(descriptor) }
            descriptor = -1
        }
    }
}
