import Foundation
import SkiffCore
import SkiffStandardServices
import SwiftProtobuf
import Synchronization

/// A test-only service that reports what happened to its handlers.
final class ProbeService: RegistrableService {
    static let wait = MethodDescriptor(service: "skiff.test.Probe", method: "Wait", kind: .unary)
    static let flood = MethodDescriptor(service: "skiff.test.Probe", method: "Flood", kind: .serverStreaming)
    static let big = MethodDescriptor(service: "skiff.test.Probe", method: "Big", kind: .unary)

    /// How many handlers saw their task cancelled.
    let cancellations = Atomic<Int>(0)
    /// How many handlers have started.
    let started = Atomic<Int>(0)
    /// How many messages the flood handler has handed to the writer.
    let written = Atomic<Int>(0)
    /// How many 1 MiB unary responses `Big` handlers have made (each counted when it is made).
    let bigMade = Atomic<Int>(0)

    func registerMethods(with router: inout RPCRouter) {
        router.registerUnary(Self.wait, request: Skiff_Testing_V1_Empty.self, response: Skiff_Testing_V1_Empty.self) {
            [self] _, _ in
            started.wrappingAdd(1, ordering: .relaxed)
            do {
                try await Task.sleep(for: .seconds(30))
            } catch {
                cancellations.wrappingAdd(1, ordering: .relaxed)
                throw error
            }
            return Skiff_Testing_V1_Empty()
        }
        router.registerUnary(Self.big, request: Skiff_Testing_V1_Empty.self, response: Skiff_Testing_V1_Payload.self) {
            [self] _, _ in
            bigMade.wrappingAdd(1, ordering: .relaxed)
            return .with { $0.body = Data(count: 1024 * 1024) }
        }
        router.registerServerStreaming(
            Self.flood,
            request: Skiff_Testing_V1_Empty.self,
            response: Skiff_Testing_V1_Payload.self
        ) { [self] _, writer, _ in
            let chunk = Skiff_Testing_V1_Payload.with { $0.body = Data(count: 64 * 1024) }
            for _ in 0..<1_000 {
                try await writer.write(chunk)
                written.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
}
