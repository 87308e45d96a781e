public import SwiftProtobuf

/// A service the server can route calls to. Generated service protocols refine this.
public protocol RegistrableService: Sendable {
    /// Adds a handler for each of the service's methods.
    func registerMethods(with router: inout RPCRouter)
}

/// Intercepts server calls: authentication, logging and metrics plug in here.
///
/// An interceptor may read the context, attach ``Attributes``, throw an ``RPCError`` to end the
/// call before the handler runs, or observe how the handler ended.
public protocol ServerInterceptor: Sendable {
    /// Runs around the rest of the chain (`next`), which ends in the handler.
    func intercept(context: ServerContext, next: (ServerContext) async throws -> Void) async throws
}

/// Maps `/package.Service/Method` paths to handlers.
public struct RPCRouter: Sendable {
    /// A type-erased method handler.
    public struct Handler: Sendable {
        /// The method it serves.
        public let descriptor: MethodDescriptor
        /// Runs the method on a call: reads requests from it and writes responses to it.
        public let run: @Sendable (any ServerCallStream, ServerContext) async throws -> Void
    }

    private var handlers: [String: Handler] = [:]
    private var serviceOrder: [String] = []

    public init() {}

    /// Creates a router serving the given services.
    public init(services: [any RegistrableService]) {
        for service in services { service.registerMethods(with: &self) }
    }

    /// The handler for a wire path, if one is registered.
    @inlinable
    public func handler(forPath path: String) -> Handler? { lookup(path) }

    @usableFromInline func lookup(_ path: String) -> Handler? { handlers[path] }

    /// The registered services, in registration order.
    public var services: [ServiceDescriptor] {
        serviceOrder.map { name in
            ServiceDescriptor(
                name: name,
                methods: handlers.values.map(\.descriptor).filter { $0.service == name }.sorted {
                    $0.method < $1.method
                }
            )
        }
    }

    /// Registers a type-erased handler; a later registration for the same path replaces it.
    public mutating func register(_ handler: Handler) {
        if !serviceOrder.contains(handler.descriptor.service) { serviceOrder.append(handler.descriptor.service) }
        handlers[handler.descriptor.path] = handler
    }

    /// Registers a unary method.
    public mutating func registerUnary<Request: Message, Response: Message>(
        _ descriptor: MethodDescriptor,
        request: Request.Type,
        response: Response.Type,
        handler: @escaping @Sendable (Request, ServerContext) async throws -> Response
    ) {
        register(
            Handler(descriptor: descriptor) { call, context in
                let message = try await call.receiveSingle(Request.self)
                let response = try await handler(message, context)
                try await call.sendLast(response)
            }
        )
    }

    /// Registers a server-streaming method.
    public mutating func registerServerStreaming<Request: Message, Response: Message>(
        _ descriptor: MethodDescriptor,
        request: Request.Type,
        response: Response.Type,
        handler: @escaping @Sendable (Request, RPCWriter<Response>, ServerContext) async throws -> Void
    ) {
        register(
            Handler(descriptor: descriptor) { call, context in
                let message = try await call.receiveSingle(Request.self)
                try await handler(message, RPCWriter { try await call.send($0) }, context)
            }
        )
    }

    /// Registers a client-streaming method.
    public mutating func registerClientStreaming<Request: Message, Response: Message>(
        _ descriptor: MethodDescriptor,
        request: Request.Type,
        response: Response.Type,
        handler: @escaping @Sendable (RPCAsyncSequence<Request>, ServerContext) async throws -> Response
    ) {
        register(
            Handler(descriptor: descriptor) { call, context in
                let response = try await handler(RPCAsyncSequence { try await call.receive(Request.self) }, context)
                try await call.sendLast(response)
            }
        )
    }

    /// Registers a bidirectional-streaming method.
    public mutating func registerBidirectionalStreaming<Request: Message, Response: Message>(
        _ descriptor: MethodDescriptor,
        request: Request.Type,
        response: Response.Type,
        handler:
            @escaping @Sendable (RPCAsyncSequence<Request>, RPCWriter<Response>, ServerContext) async throws -> Void
    ) {
        register(
            Handler(descriptor: descriptor) { call, context in
                try await handler(
                    RPCAsyncSequence { try await call.receive(Request.self) },
                    RPCWriter { try await call.send($0) },
                    context
                )
            }
        )
    }
}

extension RPCRouter.Handler {
    /// Runs the handler behind the interceptors and always ends the call with a status.
    ///
    /// Thrown errors are mapped through ``RPCError/init(mapping:)``, the one place where errors
    /// become statuses.
    ///
    /// - Returns: an error whose details were hidden from the client (for the log), if any.
    public func execute(
        call: any ServerCallStream,
        context: ServerContext,
        interceptors: [any ServerInterceptor]
    ) async -> (any Error)? {
        do {
            if interceptors.isEmpty {
                try await run(call, context)
            } else {
                try await Self.intercepted(interceptors[...], context: context) { context in
                    try await self.run(call, context)
                }
            }
            call.finish(.ok, message: "", metadata: [:])
            return nil
        } catch {
            let status = RPCError(mapping: error)
            call.finish(status.code, message: status.message, metadata: status.metadata)
            return RPCError.isOpaque(error) ? error : nil
        }
    }

    private static func intercepted(
        _ chain: ArraySlice<any ServerInterceptor>,
        context: ServerContext,
        body: (ServerContext) async throws -> Void
    ) async throws {
        guard let first = chain.first else { return try await body(context) }
        try await first.intercept(context: context) { context in
            try await intercepted(chain.dropFirst(), context: context, body: body)
        }
    }
}
