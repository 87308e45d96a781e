import Foundation
public import SkiffCore
import SwiftProtobuf

/// The conformance service of the wire contract (`skiff.testing.v1.TestService`), which
/// independent clients use to check their implementations. Served only when switched on
/// (`skiff-server --enable-test-service`).
///
/// Like every service it bounds its inputs before working on them (docs/PROTOCOL.md §7): a
/// `response_status.code` outside 0…16, a size outside 0…``maxResponseSize``, a `sleep_ms`
/// outside 0…``maxSleepMS``, an `interval_us` outside 0…``maxIntervalMicroseconds`` or more than
/// ``maxResponseParameters`` response parameters in one request answer INVALID_ARGUMENT.
public struct TestService: Skiff_Testing_V1_TestService.ServiceProtocol {
    /// The largest `response_size` or `ResponseParameters.size`: 16 MiB.
    public static let maxResponseSize: Int32 = 16 * 1024 * 1024
    /// The longest `sleep_ms`: 5 minutes.
    public static let maxSleepMS: Int32 = 300_000
    /// The longest `interval_us`: 10 seconds.
    public static let maxIntervalMicroseconds: Int32 = 10_000_000
    /// The most `response_parameters` in one request.
    public static let maxResponseParameters = 10_000

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
        throw RPCError(code: StatusCode(rawValue: UInt32(status.code)), message: status.message)
    }

    /// Checks a request before any work: the status to answer with and every size and delay.
    private func validate(
        status: Skiff_Testing_V1_EchoStatus?,
        sizes: some Collection<Int32>,
        sleepMS: Int32 = 0,
        intervals: some Sequence<Int32> = EmptyCollection()
    ) throws {
        if let status, !(0...16).contains(status.code) {
            throw RPCError(
                code: .invalidArgument,
                message: "response_status.code must be a status code 0…16 (got \(status.code))."
            )
        }
        guard sizes.count <= Self.maxResponseParameters else {
            throw RPCError(
                code: .invalidArgument,
                message: "At most \(Self.maxResponseParameters) response_parameters per request (got \(sizes.count))."
            )
        }
        for size in sizes where !(0...Self.maxResponseSize).contains(size) {
            throw RPCError(
                code: .invalidArgument,
                message: "A response size must be 0…\(Self.maxResponseSize) bytes (got \(size))."
            )
        }
        guard (0...Self.maxSleepMS).contains(sleepMS) else {
            throw RPCError(code: .invalidArgument, message: "sleep_ms must be 0…\(Self.maxSleepMS) (got \(sleepMS)).")
        }
        for interval in intervals where !(0...Self.maxIntervalMicroseconds).contains(interval) {
            throw RPCError(
                code: .invalidArgument,
                message: "interval_us must be 0…\(Self.maxIntervalMicroseconds) (got \(interval))."
            )
        }
    }

    private func validate(_ request: Skiff_Testing_V1_StreamingOutputCallRequest) throws {
        try validate(
            status: request.hasResponseStatus ? request.responseStatus : nil,
            sizes: request.responseParameters.lazy.map(\.size),
            intervals: request.responseParameters.lazy.map(\.intervalUs)
        )
    }

    private func payload(size: Int32) -> Skiff_Testing_V1_Payload {
        .with { $0.body = Data(count: Int(size)) }
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
        try validate(
            status: request.hasResponseStatus ? request.responseStatus : nil,
            sizes: CollectionOfOne(request.responseSize),
            sleepMS: request.sleepMs
        )
        echoMetadata(context)
        if request.sleepMs > 0 { try await Task.sleep(for: .milliseconds(Int(request.sleepMs))) }
        try check(request.hasResponseStatus ? request.responseStatus : nil)
        return .with {
            $0.payload = payload(size: request.responseSize)
            $0.peerMetadata = context.peer
        }
    }

    public func streamingOutputCall(
        request: Skiff_Testing_V1_StreamingOutputCallRequest,
        response: RPCWriter<Skiff_Testing_V1_StreamingOutputCallResponse>,
        context: ServerContext
    ) async throws {
        try validate(request)
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
            try validate(request)
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
            let body = payload(size: parameters.size)
            try await writer.write(.with { $0.payload = body })
        }
    }
}
