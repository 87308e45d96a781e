public import SkiffClient
import SkiffCore
import SwiftProtobuf
import Synchronization

/// One server address of `--target`: a host name or IP address and a TCP port.
public struct LoadTarget: Sendable, Hashable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates a target.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port` (`[v6]:port`).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The client connection target.
    public var connectionTarget: ClientConnection.Target { .host(host, port: port) }

    /// The addresses of a `--target` value: one `host:port` (`[v6]:port`), or several separated by
    /// commas (`10.0.0.1:7700,10.0.0.2:7700`), e.g. two servers on one database.
    ///
    /// - Throws: `LoadTargetError` when the list is empty or an entry is not `host:port` with a port
    ///   in 0…65535.
    public static func parseList(_ value: String) throws(LoadTargetError) -> [LoadTarget] {
        let entries = value.split(separator: ",", omittingEmptySubsequences: false)
        var targets: [LoadTarget] = []
        for entry in entries {
            let text = entry.trimmingSpaces()
            guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
                let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
            else { throw LoadTargetError(value: String(text)) }
            var host = text[..<colon]
            if host.count > 2, host.first == "[", host.last == "]" { host = host.dropFirst().dropLast() }
            targets.append(LoadTarget(host: String(host), port: port))
        }
        return targets
    }

    /// Which target each of `connections` connections goes to: the targets in turn, so that
    /// connections (and the calls spread round-robin over them) divide evenly between the servers.
    public static func assignments(connections: Int, targets: [LoadTarget]) -> [LoadTarget] {
        guard !targets.isEmpty else { return [] }
        return (0..<max(1, connections)).map { targets[$0 % targets.count] }
    }
}

/// A `--target` entry that is not `host:port`.
public struct LoadTargetError: Error, CustomStringConvertible, Equatable {
    /// The entry refused.
    public var value: String

    /// An error for the entry `value`.
    public init(value: String) { self.value = value }

    public var description: String {
        "--target must be host:port, or several separated by commas (e.g. 127.0.0.1:7700,127.0.0.1:7701); "
            + "got '\(value)'"
    }
}

extension Substring {
    /// Without leading and trailing spaces.
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}

/// `--connections` skiff/1 connections spread over one or more servers (connection *i* to target
/// *i mod n*), each call on the next connection in turn — ``ClientConnectionPool`` for several
/// addresses.
final class MultiTargetConnectionPool: ForwardingClientTransport, Sendable {
    /// The connections, in the order calls use them.
    let connections: [ClientConnection]
    private let nextIndex = Atomic<Int>(0)

    /// Creates `size` connections (at least one per target); none opens until used or ``connect()``.
    init(targets: [LoadTarget], size: Int) {
        self.connections = LoadTarget.assignments(connections: max(size, targets.count), targets: targets).map {
            ClientConnection(target: $0.connectionTarget)
        }
    }

    func destination(for method: MethodDescriptor) -> any ClientTransport { next() }

    private func next() -> ClientConnection {
        let index = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        return connections[Int(UInt(bitPattern: index) % UInt(connections.count))]
    }

    /// Opens every connection and waits until all are ready.
    func connect() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { try await connection.connect() } }
            try await group.waitForAll()
        }
    }

    /// Closes every connection gracefully (calls in flight finish).
    func close() async {
        await withTaskGroup(of: Void.self) { group in
            for connection in connections { group.addTask { await connection.close() } }
        }
    }
}
