import Foundation

/// What a caller asks for when listing: how many items, and where to continue.
///
/// The size policy is the same for every list: `0` (the protobuf default) means
/// ``defaultSize``, anything above ``maximumSize`` is capped, and a negative size is rejected.
public struct PageRequest: Hashable, Sendable {
    /// The size used when the caller asks for none (20).
    public static let defaultSize = 20
    /// The largest page returned (100); larger requests are capped, not rejected.
    public static let maximumSize = 100
    /// The most characters a page token may have; longer ones are rejected before decoding.
    public static let maximumTokenLength = 1024

    /// The number of items to return, already resolved by the size policy (1…``maximumSize``).
    public let size: Int
    /// The opaque token from the previous page's ``Page/nextPageToken``, or `nil` for the first page.
    public let token: String?

    /// Creates a page request, applying the size policy.
    ///
    /// - Parameters:
    ///   - size: The requested size; `0` means ``defaultSize``; larger than ``maximumSize`` is capped.
    ///   - token: The previous page's ``Page/nextPageToken``; `nil` or empty for the first page.
    /// - Throws: ``DomainError/Code/invalidArgument`` if `size` is negative or `token` is too long.
    public init(size: Int = 0, token: String? = nil) throws(DomainError) {
        guard size >= 0 else {
            throw DomainError(.invalidArgument, "page_size must not be negative.")
        }
        if let token, token.utf8.count > Self.maximumTokenLength {
            throw DomainError(.invalidArgument, PageToken.invalidMessage)
        }
        self.size = size == 0 ? Self.defaultSize : min(size, Self.maximumSize)
        self.token = (token?.isEmpty ?? true) ? nil : token
    }

    /// The first page with the default size.
    public static var first: PageRequest { PageRequest(validatedSize: defaultSize, token: nil) }

    private init(validatedSize: Int, token: String?) {
        self.size = validatedSize
        self.token = token
    }
}

/// One page of a list, and the token that continues it.
public struct Page<Item> {
    /// The items, in the list's order.
    public var items: [Item]
    /// The token for the next page, or `nil` if this is the last one.
    public var nextPageToken: String?

    /// Creates a page.
    public init(items: [Item], nextPageToken: String?) {
        self.items = items
        self.nextPageToken = nextPageToken
    }

    /// The same page with each item transformed (the token is unchanged).
    public func map<T>(_ transform: (Item) throws -> T) rethrows -> Page<T> {
        Page<T>(items: try items.map(transform), nextPageToken: nextPageToken)
    }

    /// A keyset page from up to `size + 1` items fetched in the list's order: the first `size` of them, and
    /// when there were more, the token `token` makes from the last item shown.
    public init(fetched: [Item], size: Int, token: (Item) -> String) {
        guard fetched.count > size else {
            self.init(items: fetched, nextPageToken: nil)
            return
        }
        let items = Array(fetched.prefix(size))
        self.init(items: items, nextPageToken: items.last.map(token))
    }
}

extension Page: Sendable where Item: Sendable {}
extension Page: Equatable where Item: Equatable {}
extension Page: Hashable where Item: Hashable {}

/// Opaque page tokens that carry a keyset cursor.
///
/// A token is the unpadded base64url of a small envelope: a marker byte naming the format and its version,
/// a `kind` naming the list it belongs to, and the cursor (the sort key of the last item returned) in
/// ``CompactCoding``'s binary form. The next page starts strictly after that key, so rows inserted or
/// deleted between calls never cause duplicates or gaps among the rows that existed throughout. Clients
/// must treat tokens as opaque.
///
/// Tokens of the earlier JSON form (`{"k":…,"v":1,"c":…}`, made before version 2) are still read, so a
/// client paging across an upgrade carries on.
///
/// Decoding validates everything and reports any problem as `invalidArgument` "page_token is not valid."
public enum PageToken {
    /// The message of every page-token decoding error.
    public static let invalidMessage = "page_token is not valid."

    /// The first byte of a version 2 token: never `{`, the first byte of a version 1 (JSON) token.
    private static let compactMarker: UInt8 = 0xA2
    private static let jsonVersion = 1
    private static let jsonDecoder = JSONDecoder()

    private struct Envelope<Cursor: Codable>: Codable {
        var k: String
        var v: Int
        var c: Cursor
    }

    /// Encodes a cursor for the list named `kind`.
    public static func encode<Cursor: Codable>(_ cursor: Cursor, kind: String) -> String {
        var bytes: [UInt8] = [compactMarker]
        bytes.reserveCapacity(96)
        CompactCoding.writeString(kind, into: &bytes)
        do {
            try CompactCoding.encode(cursor, into: &bytes)
        } catch {
            preconditionFailure("A page cursor failed to encode: \(error)")
        }
        return Base64URL.encode(bytes)
    }

    /// Decodes a token made by ``encode(_:kind:)`` for the same `kind`.
    ///
    /// - Throws: ``DomainError/Code/invalidArgument`` if the token is malformed, too long, of another
    ///   version, or belongs to another list.
    public static func decode<Cursor: Codable>(
        _ token: String,
        as type: Cursor.Type = Cursor.self,
        kind: String
    ) throws(DomainError) -> Cursor {
        guard token.utf8.count <= PageRequest.maximumTokenLength, let bytes = Base64URL.decodeBytes(token) else {
            throw DomainError(.invalidArgument, invalidMessage)
        }
        switch bytes.first {
        case compactMarker:
            var reader = CompactCoding.Reader(bytes: bytes[1...])
            guard let tokenKind = try? reader.string(), tokenKind == kind else {
                throw DomainError(.invalidArgument, invalidMessage)
            }
            do {
                return try CompactCoding.decode(Cursor.self, from: &reader)
            } catch {
                throw DomainError(.invalidArgument, invalidMessage, cause: error)
            }
        case UInt8(ascii: "{"):
            let envelope: Envelope<Cursor>
            do {
                envelope = try jsonDecoder.decode(Envelope<Cursor>.self, from: Data(bytes))
            } catch {
                throw DomainError(.invalidArgument, invalidMessage, cause: error)
            }
            guard envelope.k == kind, envelope.v == jsonVersion else {
                throw DomainError(.invalidArgument, invalidMessage)
            }
            return envelope.c
        default:
            throw DomainError(.invalidArgument, invalidMessage)
        }
    }

    /// The cursor of a page request of the list `kind`, or `nil` for the first page.
    ///
    /// - Parameter belongs: Whether the cursor was made for this very request (its owner, query, filters).
    /// - Throws: ``DomainError/Code/invalidArgument`` for a token that is malformed, of another list, or
    ///   `belongs` refuses.
    public static func cursor<Cursor: Codable>(
        of page: PageRequest,
        as type: Cursor.Type = Cursor.self,
        kind: String,
        belongs: (Cursor) -> Bool
    ) throws(DomainError) -> Cursor? {
        guard let token = page.token else { return nil }
        let cursor = try decode(token, as: type, kind: kind)
        guard belongs(cursor) else { throw DomainError(.invalidArgument, invalidMessage) }
        return cursor
    }
}
