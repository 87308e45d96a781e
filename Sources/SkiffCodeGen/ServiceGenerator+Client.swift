import SwiftProtobufPluginLibrary

/// The client side: a typed client over any `ClientTransport`.
extension ServiceGenerator {
    func writeClient(into writer: inout SourceWriter) {
        writer.line("/// A typed client for `\(service.fullName)`, calling through any `ClientTransport`.")
        writer.block("\(v)struct Client: Swift.Sendable") { writer in
            writer.line("/// The transport calls go through.")
            writer.line("\(v)let transport: any SkiffCore.ClientTransport")
            writer.line()
            writer.line(
                "/// Creates a client calling through a transport (a connection, a pool, an in-process channel)."
            )
            writer.block("\(v)init(transport: any SkiffCore.ClientTransport)") { writer in
                writer.line("self.transport = transport")
            }
            for method in methods {
                writer.line()
                writeClientMethod(method, into: &writer)
            }
        }
    }

    private func writeClientMethod(_ method: Method, into writer: inout SourceWriter) {
        let descriptor = "Method.\(method.enumName).descriptor"
        let options = "options: SkiffCore.CallOptions(metadata: metadata, timeout: timeout),"
        let callOptions = ["metadata: SkiffCore.Metadata = [:],", "timeout: Swift.Duration? = nil,"]
        let requestWriter =
            "requests: @escaping @Sendable (SkiffCore.RPCWriter<\(method.input)>) async throws -> Swift.Void"
        let onResponse =
            "onResponse: @escaping @Sendable (SkiffCore.StreamingClientResponse<\(method.output)>) async throws -> Result"

        let generics: String
        let parameters: [String]
        let result: String
        let body: [String]
        switch method.kind {
        case .unary:
            generics = ""
            parameters = ["_ request: \(method.input),"] + callOptions
            result = method.output
            body = [
                "try await transport.unary(",
                "    \(descriptor),",
                "    request: request,",
                "    \(options)",
                "    responseType: \(method.output).self",
                ").message",
            ]
        case .serverStreaming:
            generics = "<Result: Swift.Sendable>"
            parameters = ["_ request: \(method.input),"] + callOptions + [onResponse]
            result = "Result"
            body = [
                "try await transport.serverStreaming(",
                "    \(descriptor),",
                "    request: request,",
                "    \(options)",
                "    responseType: \(method.output).self,",
                "    body: onResponse",
                ")",
            ]
        case .clientStreaming:
            generics = ""
            parameters = callOptions + [requestWriter]
            result = method.output
            body = [
                "try await transport.clientStreaming(",
                "    \(descriptor),",
                "    \(options)",
                "    responseType: \(method.output).self,",
                "    requests: requests",
                ").message",
            ]
        case .bidirectionalStreaming:
            generics = "<Result: Swift.Sendable>"
            parameters = callOptions + [requestWriter + ",", onResponse]
            result = "Result"
            body = [
                "try await transport.streaming(",
                "    \(descriptor),",
                "    \(options)",
                "    requestType: \(method.input).self,",
                "    responseType: \(method.output).self,",
                "    requests: requests,",
                "    body: onResponse",
                ")",
            ]
        }

        comment(method.comments, into: &writer)
        writer.line("\(v)func \(method.functionName)\(generics)(")
        for (index, parameter) in parameters.enumerated() {
            // The last parameter has no trailing comma.
            let text =
                index == parameters.count - 1 && parameter.hasSuffix(",") ? String(parameter.dropLast()) : parameter
            writer.line("    " + text)
        }
        writer.block(") async throws -> \(result)") { writer in
            for line in body { writer.line(line) }
        }
    }
}
