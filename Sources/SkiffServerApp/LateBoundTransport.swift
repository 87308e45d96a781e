import SkiffCore
import SwiftProtobuf
import Synchronization

/// A transport whose destination is set once, after construction: it breaks the construction
/// cycles of services that call each other (Bids calls Listings and Chat, Listings calls Bids and
/// Chat, Chat calls Accounts and Listings). Each service gets typed clients over it; the
/// composition root binds it, once the local services exist, to the transport that routes each call
/// to them or to the upstream of a service run elsewhere (``ServiceRoutingTransport``).
///
/// A call made before ``bind(_:)`` fails with UNAVAILABLE.
final class LateBoundTransport: ClientTransport {
    private let target = Mutex<(any ClientTransport)?>(nil)

    init() {}

    /// Sets the destination. Call once, before serving.
    func bind(_ transport: any ClientTransport) {
        target.withLock { $0 = transport }
    }

    private func destination() throws -> any ClientTransport {
        guard let transport = target.withLock({ $0 }) else {
            throw RPCError(code: .unavailable, message: "The in-process services are not wired yet.")
        }
        return transport
    }

    func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        try await destination().unary(method, request: request, options: options, responseType: responseType)
    }

    func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await destination().streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            requests: requests,
            body: body
        )
    }
}
