import SwiftProtobufPluginLibrary

/// The server side: the service protocol and the registration of its methods with a router.
extension ServiceGenerator {
    /// The requirement a service implementation provides for a method.
    private func requirement(_ method: Method) -> String {
        let context = "context: SkiffCore.ServerContext"
        let name = method.functionName
        return switch method.kind {
        case .unary:
            "func \(name)(request: \(method.input), \(context)) async throws -> \(method.output)"
        case .serverStreaming:
            "func \(name)(request: \(method.input), response: SkiffCore.RPCWriter<\(method.output)>, \(context)) "
                + "async throws"
        case .clientStreaming:
            "func \(name)(requests: SkiffCore.RPCAsyncSequence<\(method.input)>, \(context)) "
                + "async throws -> \(method.output)"
        case .bidirectionalStreaming:
            "func \(name)(requests: SkiffCore.RPCAsyncSequence<\(method.input)>, "
                + "response: SkiffCore.RPCWriter<\(method.output)>, \(context)) async throws"
        }
    }

    func writeServiceProtocol(into writer: inout SourceWriter) {
        if serviceComments.isEmpty {
            writer.line("/// The methods a `\(service.name)` implementation provides.")
        } else {
            comment(serviceComments, into: &writer)
        }
        writer.line("///")
        writer.line("/// Conforming types are `RegistrableService`s: pass them to the server or an `RPCRouter`.")
        writer.block("\(v)protocol ServiceProtocol: SkiffCore.RegistrableService") { writer in
            for (index, method) in methods.enumerated() {
                if index > 0 { writer.line() }
                comment(method.comments, into: &writer)
                writer.line(requirement(method))
            }
        }
    }

    func writeRegistration(into writer: inout SourceWriter) {
        writer.block("extension \(namespace).ServiceProtocol") { writer in
            writer.line("/// Registers a handler for each of the service's methods.")
            writer.block("\(v)func registerMethods(with router: inout SkiffCore.RPCRouter)") { writer in
                for method in methods {
                    let (register, parameters, call): (String, String, String) =
                        switch method.kind {
                        case .unary:
                            ("registerUnary", "request, context", "request: request, context: context")
                        case .serverStreaming:
                            (
                                "registerServerStreaming", "request, response, context",
                                "request: request, response: response, context: context"
                            )
                        case .clientStreaming:
                            ("registerClientStreaming", "requests, context", "requests: requests, context: context")
                        case .bidirectionalStreaming:
                            (
                                "registerBidirectionalStreaming", "requests, response, context",
                                "requests: requests, response: response, context: context"
                            )
                        }
                    writer.line("router.\(register)(")
                    writer.line("    \(namespace).Method.\(method.enumName).descriptor,")
                    writer.line("    request: \(method.input).self,")
                    writer.line("    response: \(method.output).self")
                    writer.block(") { \(parameters) in", opening: "") { writer in
                        writer.line("try await self.\(method.functionName)(\(call))")
                    }
                }
            }
        }
    }
}
