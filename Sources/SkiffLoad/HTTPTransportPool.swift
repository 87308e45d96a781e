import SkiffCore
import SkiffHTTPClient
import SwiftProtobuf
import Synchronization

/// `--connections` HTTP/2 connections of one call protocol, each call on the next one in turn; with
/// several targets, connection *i* goes to target *i mod n*.
final class HTTPTransportPool: ClientTransport {
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

    private func next() -> HTTPClientTransport {
        let index = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return transports[index % transports.count]
    }

    func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        try await next().unary(method, request: request, options: options, responseType: responseType)
    }

    func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await next().streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            requests: requests,
            body: body
        )
    }
}
