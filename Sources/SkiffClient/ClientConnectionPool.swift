public import NIOCore
public import NIOPosix
public import SkiffCore
public import SwiftProtobuf
import Synchronization

/// Several ``ClientConnection``s to one target, used round-robin: for load generation, or to
/// spread calls over more than one event loop and socket.
public final class ClientConnectionPool: ForwardingClientTransport, Sendable {
    /// The connections, each on its own event loop of the group (as far as the group has loops).
    public let connections: [ClientConnection]
    private let nextIndex = Atomic<Int>(0)

    /// Creates a pool of `size` connections; none opens until used or ``connect()``.
    /// - Parameters:
    ///   - target: where every connection goes.
    ///   - size: how many connections (at least one).
    ///   - configuration: the configuration of every connection.
    ///   - eventLoopGroup: where the connections' event loops come from.
    public init(
        target: ClientConnection.Target,
        size: Int,
        configuration: ClientConfiguration = .defaults,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.connections = (0..<max(1, size)).map { _ in
            ClientConnection(target: target, configuration: configuration, eventLoopGroup: eventLoopGroup)
        }
    }

    /// The connection the next call uses.
    public func next() -> ClientConnection {
        let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        return connections[Int(UInt(bitPattern: index) % UInt(connections.count))]
    }

    /// Opens every connection and waits until all are ready.
    public func connect() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { try await connection.connect() } }
            try await group.waitForAll()
        }
    }

    /// The next connection: calls go round-robin.
    public func destination(for method: MethodDescriptor) -> any ClientTransport { next() }

    /// Closes every connection gracefully (calls in flight finish).
    public func close() async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.close() } }
        }
    }
}
