public import SwiftProtobuf

/// The response to a unary or client-streaming call.
public struct ClientResponse<Message: Sendable>: Sendable {
    /// The response message.
    public var message: Message
    /// The response's initial metadata.
    public var metadata: Metadata
    /// The response's trailing metadata.
    public var trailingMetadata: Metadata

    public init(message: Message, metadata: Metadata, trailingMetadata: Metadata) {
        self.message = message
        self.metadata = metadata
        self.trailingMetadata = trailingMetadata
    }
}

/// The response side of a streaming call, handed to the caller's closure.
public struct StreamingClientResponse<Message: Sendable>: Sendable {
    /// The response's initial metadata.
    public let metadata: Metadata
    /// The response messages. Iteration throws ``RPCError`` if the call ends with an error.
    public let messages: RPCAsyncSequence<Message>
    private let trailers: @Sendable () async throws -> Metadata

    public init(
        metadata: Metadata,
        messages: RPCAsyncSequence<Message>,
        trailingMetadata: @escaping @Sendable () async throws -> Metadata
    ) {
        self.metadata = metadata
        self.messages = messages
        self.trailers = trailingMetadata
    }

    /// The trailing metadata, available once every message has been read.
    public func trailingMetadata() async throws -> Metadata { try await trailers() }
}

/// What a typed client calls through: a connection, a pool, or an in-process channel.
///
/// Implementation requirements: a call that ends with a status other than OK throws
/// ``RPCError``; cancelling the calling task cancels the call (the server sees CANCELLED);
/// a timeout in ``CallOptions`` is sent as `grpc-timeout` and enforced locally too.
public protocol ClientTransport: Sendable {
    /// Makes a unary call.
    func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response>

    /// Makes a streaming call of any kind. `requests` runs concurrently with `body`; the
    /// request side ends when it returns. `body` runs once the response metadata has arrived.
    func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result
}

extension ClientTransport {
    /// Makes a server-streaming call.
    public func serverStreaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await streaming(
            method,
            options: options,
            requestType: Request.self,
            responseType: Response.self,
            requests: { try await $0.write(request) },
            body: body
        )
    }

    /// Makes a client-streaming call.
    public func clientStreaming<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        options: CallOptions,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void
    ) async throws -> ClientResponse<Response> {
        try await streaming(
            method,
            options: options,
            requestType: Request.self,
            responseType: Response.self,
            requests: requests
        ) { response in
            var iterator = response.messages.makeAsyncIterator()
            guard let message = try await iterator.next() else {
                throw RPCError(code: .internal, message: "The server sent no response message.")
            }
            guard try await iterator.next() == nil else {
                throw RPCError(code: .internal, message: "The server sent more than one response message.")
            }
            return ClientResponse(
                message: message,
                metadata: response.metadata,
                trailingMetadata: try await response.trailingMetadata()
            )
        }
    }
}

/// Intercepts client calls (adding credentials, logging, retries).
public protocol ClientInterceptor: Sendable {
    /// Runs around the rest of the chain; `next` makes the call with the given options.
    func intercept<Result: Sendable>(
        method: MethodDescriptor,
        options: CallOptions,
        next: (CallOptions) async throws -> Result
    ) async throws -> Result
}

/// A transport that runs client interceptors, in order, around another transport.
public struct InterceptedTransport: ClientTransport {
    public let base: any ClientTransport
    public let interceptors: [any ClientInterceptor]

    public init(_ base: any ClientTransport, interceptors: [any ClientInterceptor]) {
        self.base = base
        self.interceptors = interceptors
    }

    private func run<Result: Sendable>(
        _ chain: ArraySlice<any ClientInterceptor>,
        method: MethodDescriptor,
        options: CallOptions,
        call: (CallOptions) async throws -> Result
    ) async throws -> Result {
        guard let first = chain.first else { return try await call(options) }
        return try await first.intercept(method: method, options: options) { options in
            try await run(chain.dropFirst(), method: method, options: options, call: call)
        }
    }

    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        try await run(interceptors[...], method: method, options: options) { options in
            try await base.unary(method, request: request, options: options, responseType: responseType)
        }
    }

    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await run(interceptors[...], method: method, options: options) { options in
            try await base.streaming(
                method,
                options: options,
                requestType: requestType,
                responseType: responseType,
                requests: requests,
                body: body
            )
        }
    }
}

/// A transport that makes each call on another transport it picks per call: a pool's next
/// connection, the process a service runs in, a destination bound late. It implements only
/// ``destination(for:)``; the calls are forwarded as they are.
public protocol ForwardingClientTransport: ClientTransport {
    /// The transport the call of `method` goes to.
    ///
    /// - Throws: ``RPCError`` when there is none (the call fails with it).
    func destination(for method: MethodDescriptor) throws -> any ClientTransport
}

extension ForwardingClientTransport {
    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        try await destination(for: method).unary(method, request: request, options: options, responseType: responseType)
    }

    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        try await destination(for: method).streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            requests: requests,
            body: body
        )
    }
}
