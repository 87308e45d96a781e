public import Foundation
public import SkiffDomain

/// The picture formats Skiff accepts, detected from the bytes.
public enum ImageContentType: String, CaseIterable, Codable, Hashable, Sendable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case heic = "image/heic"
    case webp = "image/webp"

    /// The most leading bytes ``detect(_:)`` looks at.
    public static let sniffLength = 16

    /// The type of an image from its first bytes, or `nil` if it is not JPEG, PNG, HEIC or WebP.
    ///
    /// - JPEG: `FF D8 FF`.
    /// - PNG: `89 50 4E 47 0D 0A 1A 0A`.
    /// - WebP: `RIFF`, four size bytes, `WEBP`.
    /// - HEIC: an ISO-BMFF `ftyp` box at offset 4 whose major brand is `heic`, `heix`, `mif1`, `msf1` or `hevc`.
    public static func detect(_ bytes: some Collection<UInt8>) -> ImageContentType? {
        let head = Array(bytes.prefix(sniffLength))
        func matches(_ signature: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + signature.count && Array(head[offset..<(offset + signature.count)]) == signature
        }
        if matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if matches(Array("RIFF".utf8)) && matches(Array("WEBP".utf8), at: 8) { return .webp }
        if matches(Array("ftyp".utf8), at: 4) {
            let brands = ["heic", "heix", "mif1", "msf1", "hevc"].map { Array($0.utf8) }
            if brands.contains(where: { matches($0, at: 8) }) { return .heic }
        }
        return nil
    }
}

/// A stored picture with its bytes.
public struct StoredImage: Hashable, Sendable {
    /// The image id (`img_…`).
    public var id: String
    /// Who uploaded it.
    public var ownerID: String
    /// The detected type.
    public var contentType: ImageContentType
    /// The bytes.
    public var bytes: Data
    /// When it was uploaded.
    public var createdAt: Date

    public init(id: String, ownerID: String, contentType: ImageContentType, bytes: Data, createdAt: Date) {
        self.id = id
        self.ownerID = ownerID
        self.contentType = contentType
        self.bytes = bytes
        self.createdAt = createdAt
    }

    /// The size in bytes.
    public var sizeBytes: Int { bytes.count }
}

/// An image without its bytes: what a download starts with.
public struct ImageHeader: Hashable, Sendable {
    /// The image id (`img_…`).
    public var id: String
    /// Who uploaded it.
    public var ownerID: String
    /// The detected type.
    public var contentType: ImageContentType
    /// The size in bytes.
    public var sizeBytes: Int
    /// When it was uploaded.
    public var createdAt: Date

    public init(id: String, ownerID: String, contentType: ImageContentType, sizeBytes: Int, createdAt: Date) {
        self.id = id
        self.ownerID = ownerID
        self.contentType = contentType
        self.sizeBytes = sizeBytes
        self.createdAt = createdAt
    }
}

extension StoredImage {
    /// The image without its bytes.
    public var header: ImageHeader {
        ImageHeader(id: id, ownerID: ownerID, contentType: contentType, sizeBytes: sizeBytes, createdAt: createdAt)
    }

    /// Up to `length` bytes from `offset` (a slice of ``bytes``, copied).
    public func bytes(offset: Int, length: Int) -> Data {
        let start = bytes.startIndex + min(max(0, offset), bytes.count)
        let end = start + min(max(0, length), bytes.endIndex - start)
        return Data(bytes[start..<end])
    }
}

/// Collects an upload chunk by chunk, enforcing the limits before it buffers more.
///
/// ```swift
/// var upload = ImageUpload()
/// for chunk in chunks { try upload.append(chunk) }
/// let (type, bytes) = try upload.finish()
/// ```
public struct ImageUpload: Sendable {
    /// The largest image, in bytes (5 MiB).
    public static let maximumSize = 5 * 1024 * 1024
    /// The largest chunk, in bytes (1 MiB).
    public static let maximumChunkSize = 1024 * 1024

    private var data = Data()
    private let maximumSize: Int

    /// Creates an empty upload; `maximumSize` is for tests.
    public init(maximumSize: Int = ImageUpload.maximumSize) {
        self.maximumSize = maximumSize
    }

    /// The bytes received so far.
    public var count: Int { data.count }

    /// Adds a chunk.
    ///
    /// - Throws: `invalidArgument` for a chunk over 1 MiB, a total over 5 MiB (checked before the chunk is
    ///   kept), or first bytes that cannot start a JPEG, PNG, HEIC or WebP file.
    public mutating func append(_ chunk: Data) throws(DomainError) {
        guard chunk.count <= Self.maximumChunkSize else {
            throw DomainError(.invalidArgument, "A chunk has \(chunk.count) bytes: send chunks of at most 1 MiB.")
        }
        guard data.count + chunk.count <= maximumSize else {
            throw DomainError(.invalidArgument, "The image is larger than 5 MiB (5,242,880 bytes): send a smaller one.")
        }
        data.append(chunk)
        // Reject a wrong type as soon as enough bytes are in, rather than after 5 MiB.
        if data.count >= ImageContentType.sniffLength, data.count - chunk.count < ImageContentType.sniffLength {
            guard ImageContentType.detect(data) != nil else { throw Self.unsupported }
        }
    }

    /// The detected type and the bytes.
    ///
    /// - Throws: `invalidArgument` if no bytes came or they are not JPEG, PNG, HEIC or WebP.
    public func finish() throws(DomainError) -> (ImageContentType, Data) {
        guard !data.isEmpty else {
            throw DomainError(.invalidArgument, "The upload has no bytes: send the image in chunk messages.")
        }
        guard let type = ImageContentType.detect(data) else { throw Self.unsupported }
        return (type, data)
    }

    static let unsupported = DomainError(
        .invalidArgument,
        "The bytes are not a JPEG, PNG, HEIC or WebP image: upload one of those formats."
    )
}
