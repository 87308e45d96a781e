/// The response side of one call, with the rules every transport keeps (`docs/PROTOCOL.md`,
/// "Responses"):
/// - the handler may set the initial metadata until its first response message is handed over;
///   after that, setting it has no effect;
/// - the HEADERS, carrying the initial metadata, go before the first message;
/// - the response ends once: later ends do nothing;
/// - a response that ends before its HEADERS went is *trailers-only*: the initial metadata goes in
///   the TRAILERS, ahead of the trailing metadata.
///
/// A value type with no I/O and no lock: a transport keeps one per call where its call's state
/// lives (behind a lock, or confined to an event loop) and acts on what the methods return.
///
/// ```swift
/// var response = ResponseState()
/// response.setInitialMetadata(["x-request-id": "42"])
/// if let headers = response.willSendMessage() { writeHeaders(headers) }
/// writeMessage(bytes)
/// if let end = response.end(.ok, message: "", metadata: [:]) { writeTrailers(end) }
/// ```
public struct ResponseState: Sendable {
    /// How a response ends: the TRAILERS to write.
    public struct End: Sendable, Hashable {
        /// The call's status.
        public var status: StatusCode
        /// The status message.
        public var message: String
        /// The trailing metadata: in a trailers-only response, the initial metadata first.
        public var metadata: Metadata
        /// Whether no HEADERS went before (a trailers-only response).
        public var trailersOnly: Bool
    }

    /// The metadata for the HEADERS, while they have not gone.
    public private(set) var initialMetadata = Metadata()
    /// The metadata added for the TRAILERS so far.
    public private(set) var trailingMetadata = Metadata()
    /// Whether the first response message has been handed over (so the HEADERS went or go first).
    public private(set) var headersSent = false
    /// Whether the response has ended.
    public private(set) var ended = false

    /// A response not started.
    public init() {}

    /// Sets the metadata for the HEADERS. No effect once the first message was handed over or the
    /// response ended.
    public mutating func setInitialMetadata(_ metadata: Metadata) {
        guard !headersSent, !ended else { return }
        initialMetadata = metadata
    }

    /// Adds metadata for the TRAILERS. No effect once the response ended.
    public mutating func addTrailingMetadata(_ metadata: Metadata) {
        guard !ended else { return }
        trailingMetadata.add(contentsOf: metadata)
    }

    /// Marks a response message as handed over.
    ///
    /// - Returns: the metadata of the HEADERS to write before this message when it is the first,
    ///   `nil` when they have gone already.
    ///   A transport refuses messages once the response has ended (check ``ended`` first).
    public mutating func willSendMessage() -> Metadata? {
        guard !headersSent else { return nil }
        headersSent = true
        return initialMetadata
    }

    /// Marks the HEADERS as sent, when a transport writes them on its own schedule (when the first
    /// message reaches the wire rather than when it is handed over).
    ///
    /// - Returns: the metadata of the HEADERS.
    public mutating func headers() -> Metadata {
        headersSent = true
        return initialMetadata
    }

    /// Ends the response.
    ///
    /// - Parameter metadata: metadata for the TRAILERS besides what the handler added (e.g. an
    ///   error's), written after it.
    /// - Returns: the TRAILERS to write, or `nil` when the response had ended already.
    public mutating func end(_ status: StatusCode, message: String, metadata: Metadata) -> End? {
        guard !ended else { return nil }
        ended = true
        return End(
            status: status,
            message: message,
            metadata: Self.trailers(
                initial: headersSent ? nil : initialMetadata,
                trailing: trailingMetadata,
                status: metadata
            ),
            trailersOnly: !headersSent
        )
    }

    /// The TRAILERS' metadata in the order every transport writes it: the initial metadata of a
    /// trailers-only response, then the handler's trailing metadata, then the status's.
    public static func trailers(initial: Metadata?, trailing: Metadata, status: Metadata) -> Metadata {
        var result = initial ?? Metadata()
        result.add(contentsOf: trailing)
        result.add(contentsOf: status)
        return result
    }
}
