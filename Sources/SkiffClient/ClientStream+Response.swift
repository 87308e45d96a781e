import NIOCore
import SkiffCore
import SkiffWire
import SwiftProtobuf
import Synchronization

extension ClientStream {
    /// Task side: waits for the response HEADERS (or a trailers-only response) and builds what
    /// the caller's `body` receives. A trailers-only error throws.
    func responseHead<Response: Message>() async throws -> StreamingClientResponse<Response> {
        guard let responses else { preconditionFailure("not a streaming call") }
        let first: ResponsePart?
        do {
            first = try await responses.next()
        } catch {
            throw Self.map(error)
        }
        switch first {
        case .headers(let metadata):
            return StreamingClientResponse(
                metadata: metadata,
                messages: RPCAsyncSequence { try await self.nextMessage(Response.self) },
                trailingMetadata: { self.trailers.withLock { $0 } }
            )
        case .trailers(let trailers):
            // Trailers-only OK: no messages.
            return StreamingClientResponse(metadata: [:], messages: .empty, trailingMetadata: { trailers })
        case .message, nil:
            throw RPCError(code: .internal, message: "The response ended without HEADERS or TRAILERS.")
        }
    }

    /// Task side: the next response message, `nil` after OK trailers.
    func nextMessage<Response: Message>(_ type: Response.Type) async throws -> Response? {
        guard let responses else { return nil }
        var part = responses.poll()
        if part == nil {
            // About to wait: return the credit owed so a partly sent message can complete.
            flushCredit()
            do {
                part = try await responses.next()
            } catch {
                throw Self.map(error)
            }
        }
        switch part {
        case .message(let buffer):
            consumed(buffer.readableBytes)
            do {
                return try Response(buffer: buffer)
            } catch {
                let failure = RPCError(
                    code: .internal,
                    message: "Could not decode a response as \(Response.protoMessageName): \(error)"
                )
                loop.execute { self.cancel(failure) }
                throw failure
            }
        case .trailers, nil:
            return nil
        case .headers:
            throw RPCError(code: .internal, message: "The server sent a second HEADERS frame.")
        }
    }

    static func map(_ error: any Error) -> RPCError {
        if let error = error as? RPCError { return error }
        if error is CancellationError { return RPCError(code: .cancelled, message: "The call was cancelled.") }
        return RPCError(mapping: error)
    }
}
