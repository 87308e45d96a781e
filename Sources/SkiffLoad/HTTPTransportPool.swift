import SkiffCore
import SkiffHTTPClient
import SwiftProtobuf
import Synchronization

/// `--connections` HTTP/2 connections of one call protocol, each call on the next one in turn.
final class HTTPTransportPool: ClientTransport {
    private let transports: [HTTPClientTransport]
    private let counter = Atomic<Int>(0)

    private init(_ transports: [HTTPClientTransport]) { self.transports = transports }

    /// Opens `size` connections to `host:port`; if one fails, those already open are closed.
    static func connect(
        host: String,
        port: Int,
        protocol callProtocol: HTTPClientProtocol,
        size: Int
    ) async throws
        -> HTTPTransportPool
    {
        var transports: [HTTPClientTransport] = []
        do {
            for _ in 0..<max(size, 1) {
                transports.append(try await HTTPClientTransport.connect(host: host, port: port, protocol: callProtocol))
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
