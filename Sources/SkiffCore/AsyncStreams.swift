/// A stream of messages: requests on the server, responses on the client.
///
/// Iterate it once. It ends when the peer's side ends; on the client it throws ``RPCError``
/// when the call ends with a status other than OK.
public struct RPCAsyncSequence<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    @usableFromInline let nextElement: @Sendable () async throws -> Element?

    /// Creates a sequence from a function that produces the next element, or `nil` at the end.
    @inlinable
    public init(next: @escaping @Sendable () async throws -> Element?) {
        self.nextElement = next
    }

    /// A sequence with no elements.
    public static var empty: RPCAsyncSequence<Element> { RPCAsyncSequence { nil } }

    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let nextElement: @Sendable () async throws -> Element?
        @usableFromInline init(nextElement: @escaping @Sendable () async throws -> Element?) {
            self.nextElement = nextElement
        }
        @inlinable
        public mutating func next() async throws -> Element? { try await nextElement() }
    }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextElement: nextElement) }

    /// Collects every element (for tests and small streams).
    public func collect() async throws -> [Element] {
        var result: [Element] = []
        for try await element in self { result.append(element) }
        return result
    }
}

/// Writes messages: responses on the server, requests on the client.
///
/// `write` suspends while the peer's flow-control window is closed, so a producer never
/// outruns a slow reader.
public struct RPCWriter<Element: Sendable>: Sendable {
    @usableFromInline let writeElement: @Sendable (Element) async throws -> Void

    /// Creates a writer from a function that writes one element.
    @inlinable
    public init(write: @escaping @Sendable (Element) async throws -> Void) {
        self.writeElement = write
    }

    /// Writes one message.
    @inlinable
    public func write(_ element: Element) async throws { try await writeElement(element) }

    /// Writes each message of a sequence in order.
    public func write<S: Sequence>(contentsOf elements: S) async throws where S.Element == Element {
        for element in elements { try await writeElement(element) }
    }
}
