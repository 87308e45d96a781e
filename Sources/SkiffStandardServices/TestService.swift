import Foundation
public import SkiffCore
import SwiftProtobuf

/// The conformance service of the wire contract (`skiff.testing.v1.TestService`), which
/// independent clients use to check their implementations. Served only when switched on
/// (`skiff-server --enable-test-service`).
public struct TestService: Skiff_Testing_V1_TestService.ServiceProtocol {
    public init() {}

    /// Echoes `x-skiff-echo-initial` entries into the response's initial metadata and
    /// `x-skiff-echo-trailing-bin` entries into its trailers.
    private func echoMetadata(_ context: ServerContext) {
        var initial = Metadata()
        var trailing = Metadata()
        for entry in context.metadata {
            if entry.key == "x-skiff-echo-initial" { initial.add(entry) }
            if entry.key == "x-skiff-echo-trailing-bin" { trailing.add(entry) }
        }
        if !initial.isEmpty { context.setInitialMetadata(initial) }
        if !trailing.isEmpty { context.addTrailingMetadata(trailing) }
    }

    private func check(_ status: Skiff_Testing_V1_EchoStatus?) throws {
        guard let status, status.code != 0 else { return }
        throw RPCError(code: StatusCode(rawValue: UInt32(bitPattern: status.code)), message: status.message)
    }

    private func payload(size: Int32) throws -> Skiff_Testing_V1_Payload {
        guard size >= 0 else {
            throw RPCError(code: .invalidArgument, message: "response size must not be negative (got \(size))")
        }
        return .with { $0.body = Data(count: Int(size)) }
    }

    public func emptyCall(
        request: Skiff_Testing_V1_Empty,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_Empty {
        echoMetadata(context)
        return Skiff_Testing_V1_Empty()
    }

    public func unaryCall(
        request: Skiff_Testing_V1_SimpleRequest,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_SimpleResponse {
        echoMetadata(context)
        if request.sleepMs > 0 { try await Task.sleep(for: .milliseconds(Int(request.sleepMs))) }
        try check(request.hasResponseStatus ? request.responseStatus : nil)
        return try .with {
            $0.payload = try payload(size: request.responseSize)
            $0.peerMetadata = context.peer
        }
    }

    public func streamingOutputCall(
        request: Skiff_Testing_V1_StreamingOutputCallRequest,
        response: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>,
        context: ServerContext
    ) async throws {
        echoMetadata(context)
        try await respond(to: request, with: response)
        try check(request.hasResponseStatus ? request.responseStatus : nil)
    }

    public func streamingInputCall(
        requests: RPCAsyncSequence<Skiff_Testing_V1_StreamingInputCallRequest>,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_StreamingInputCallResponse {
        echoMetadata(context)
        var total = 0
        for try await request in requests { total += request.payload.body.count }
        return .with { $0.aggregatedPayloadSize = Int32(clamping: total) }
    }

    public func fullDuplexCall(
        requests: RPCAsyncSequence<Skiff_Testing_V1_StreamingOutputCallRequest>,
        response: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>,
        context: ServerContext
    ) async throws {
        echoMetadata(context)
        for try await request in requests {
            try await respond(to: request, with: response)
            try check(request.hasResponseStatus ? request.responseStatus : nil)
        }
    }

    public func unimplementedCall(
        request: Skiff_Testing_V1_Empty,
        context: ServerContext
    ) async throws -> Skiff_Testing_V1_Empty {
        throw RPCError(code: .unimplemented, message: "UnimplementedCall is never implemented.")
    }

    private func respond(
        to request: Skiff_Testing_V1_StreamingOutputCallRequest,
        with writer: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>
    ) async throws {
        for parameters in request.responseParameters {
            if parameters.intervalUs > 0 { try await Task.sleep(for: .microseconds(Int(parameters.intervalUs))) }
            let body = try payload(size: parameters.size)
            try await writer.write(.with { $0.payload = body })
        }
    }
}
