import SkiffCore
import SkiffHTTPClient
import SwiftProtobuf
import Synchronization

/// `--connections` HTTP/2 connections of one call protocol, each call on the next one in turn; with
/// several targets, connection *i* goes to target *i mod n*.
final class HTTPTransportPool: ForwardingClientTransport {
    private let transports: [HTTPClientTransport]
    private let counter = Atomic<Int>(0)

    private init(_ transports: [HTTPClientTransport]) { self.transports = transports }

    /// Opens `size` connections (at least one per target) over `targets` in turn; if one fails, those
    /// already open are closed.
    static func connect(
        targets: [LoadTarget],
        protocol callProtocol: HTTPClientProtocol,
        size: Int
    ) async throws
        -> HTTPTransportPool
    {
        var transports: [HTTPClientTransport] = []
        do {
            for target in LoadTarget.assignments(connections: max(size, targets.count), targets: targets) {
                transports.append(
                    try await HTTPClientTransport.connect(host: target.host, port: target.port, protocol: callProtocol)
                )
            }
        } catch {
            for transport in transports { await transport.close() }
            throw error
        }
        return HTTPTransportPool(transports)
    }

    /// Closes every connection.
    func close() async {
        for transport in transports { await transport.close() }
    }

    func destination(for method: MethodDescriptor) -> any ClientTransport { next() }

    private func next() -> HTTPClientTransport {
        let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return transports[index % transports.count]
    }
}
