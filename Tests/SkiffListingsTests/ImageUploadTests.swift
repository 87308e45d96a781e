import Foundation
import SkiffDomain
import SkiffListings
import Testing

@Suite("Image type detection and upload limits")
struct ImageUploadTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0, count: 20)
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 20)
    static let webp: [UInt8] = Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [0, 0]
    static func heic(_ brand: String) -> [UInt8] {
        [0, 0, 0, 0x18] + Array("ftyp".utf8) + Array(brand.utf8) + [0, 0, 0, 0]
    }

    @Test("Magic bytes decide the type")
    func detection() {
        #expect(ImageContentType.detect(Self.jpeg) == .jpeg)
        #expect(ImageContentType.detect(Self.png) == .png)
        #expect(ImageContentType.detect(Self.webp) == .webp)
        for brand in ["heic", "heix", "mif1", "msf1", "hevc"] {
            #expect(ImageContentType.detect(Self.heic(brand)) == .heic, "\(brand)")
        }
        #expect(ImageContentType.detect(Self.heic("avif")) == nil)
        #expect(ImageContentType.detect(Array("GIF89a....".utf8)) == nil)
        #expect(ImageContentType.detect(Array("RIFF....WAVE".utf8)) == nil)
        #expect(ImageContentType.detect([0xFF, 0xD8]) == nil)
        #expect(ImageContentType.detect([UInt8]()) == nil)
        #expect(ImageContentType.detect(Array("%PDF-1.7 not an image".utf8)) == nil)
    }

    @Test("Chunks accumulate; the type is detected whatever was declared")
    func accumulate() throws {
        var upload = ImageUpload()
        try upload.append(Data(Self.png.prefix(3)))
        try upload.append(Data(Self.png.dropFirst(3)))
        let (type, bytes) = try upload.finish()
        #expect(type == .png)
        #expect(bytes == Data(Self.png))
    }

    @Test("Limits: empty, too big (checked before buffering), chunk over 1 MiB, wrong type early")
    func limits() throws {
        #expect(throws: DomainError.self) { try ImageUpload().finish() }
        var small = ImageUpload(maximumSize: 40)
        try small.append(Data(Self.jpeg))
        #expect(throws: DomainError.self) { try small.append(Data(count: 17)) }
        #expect(small.count == Self.jpeg.count, "the rejected chunk is not kept")
        var big = ImageUpload()
        #expect(throws: DomainError.self) { try big.append(Data(count: ImageUpload.maximumChunkSize + 1)) }
        var wrong = ImageUpload()
        #expect(throws: DomainError.self) { try wrong.append(Data(Array("GIF89a, not accepted here".utf8))) }
        var total = ImageUpload()
        try total.append(Data(Self.jpeg) + Data(count: ImageUpload.maximumChunkSize - Self.jpeg.count))
        for _ in 0..<4 { try total.append(Data(count: ImageUpload.maximumChunkSize)) }
        #expect(total.count == ImageUpload.maximumSize)
        #expect(throws: DomainError.self) { try total.append(Data(count: 1)) }
    }
}
