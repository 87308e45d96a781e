import Foundation
public import SkiffCore
import SkiffStandardServices
import SwiftProtobuf

typealias TestClient = Skiff_Testing_V1_TestService.Client

/// `echo-unary`: one `UnaryCall` of the conformance service per call, `payloadSize` bytes each way.
///
/// The server must run with `--enable-test-service`.
public struct EchoUnaryScenario: LoadScenario {
    public var name: String { "echo-unary" }
    let request: Skiff_Testing_V1_SimpleRequest

    /// Creates the scenario.
    public init(options: ScenarioOptions) {
        let size = Int32(clamping: options.payloadSize)
        request = .with {
            $0.responseSize = size
            $0.payload.body = Data(count: Int(size))
        }
    }

    public func perform(_ transport: any ClientTransport) async throws {
        let response = try await TestClient(transport: transport).unaryCall(request)
        guard response.payload.body.count == Int(request.responseSize) else {
            throw RPCError(code: .dataLoss, message: "echo returned \(response.payload.body.count) bytes")
        }
    }
}

/// `echo-stream`: one server-streaming `StreamingOutputCall` per call, `messagesPerCall` responses
/// of `payloadSize` bytes, all read before the call counts as done.
public struct EchoStreamScenario: LoadScenario {
    public var name: String { "echo-stream" }
    let request: Skiff_Testing_V1_StreamingOutputCallRequest
    let expected: Int

    /// Creates the scenario.
    public init(options: ScenarioOptions) {
        let size = Int32(clamping: options.payloadSize)
        expected = max(1, options.messagesPerCall)
        request = .with {
            $0.responseParameters = Array(repeating: .with { $0.size = size }, count: max(1, options.messagesPerCall))
        }
    }

    public func perform(_ transport: any ClientTransport) async throws {
        let count = try await TestClient(transport: transport).streamingOutputCall(request) { response in
            var n = 0
            for try await _ in response.messages { n += 1 }
            return n
        }
        guard count == expected else {
            throw RPCError(code: .dataLoss, message: "stream returned \(count) of \(expected) messages")
        }
    }
}

/// `echo-bidi`: one `FullDuplexCall` per call sending `messagesPerCall` requests of `payloadSize`
/// bytes, each answered by one response of the same size.
public struct EchoBidiScenario: LoadScenario {
    public var name: String { "echo-bidi" }
    let request: Skiff_Testing_V1_StreamingOutputCallRequest
    let messages: Int

    /// Creates the scenario.
    public init(options: ScenarioOptions) {
        let size = Int32(clamping: options.payloadSize)
        messages = max(1, options.messagesPerCall)
        request = .with {
            $0.responseParameters = [.with { $0.size = size }]
            $0.payload.body = Data(count: Int(size))
        }
    }

    public func perform(_ transport: any ClientTransport) async throws {
        let request = request
        let messages = messages
        let count = try await TestClient(transport: transport).fullDuplexCall { writer in
            for _ in 0..<messages { try await writer.write(request) }
        } onResponse: { response in
            var n = 0
            for try await _ in response.messages { n += 1 }
            return n
        }
        guard count == messages else {
            throw RPCError(code: .dataLoss, message: "bidi returned \(count) of \(messages) messages")
        }
    }
}
