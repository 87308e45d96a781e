import NIOCore
import NIOEmbedded
import NIOTestUtils
import SkiffCore
import SkiffWire
import Testing

@Suite("FrameDecoder")
struct FrameDecoderTests {
    /// A mix of frames: known types with and without payload, an unknown type, zero-length frames.
    static func sampleFrames() -> [Frame] {
        var metadata = Metadata()
        metadata.add("x-request-id", "abc")
        metadata.add("trace-bin", binary: [0, 0xff])
        var headersPayload = ByteBuffer()
        headersPayload.writeInteger(UInt16(5))
        headersPayload.writeString("/a/bc")
        headersPayload.writeMetadataBlock(metadata)
        return [
            Frame(type: .settings, streamID: 0, payload: ByteBuffer(bytes: [0, 1, 0, 0, 0x40, 0])),
            Frame(type: .settings, flags: .ack, streamID: 0, payload: ByteBuffer()),
            Frame(type: .headers, streamID: 1, payload: headersPayload),
            Frame(type: .message, flags: .endStream, streamID: 1, payload: ByteBuffer(repeating: 0x5a, count: 300)),
            Frame(type: .message, streamID: 3, payload: ByteBuffer()),
            Frame(type: .ping, streamID: 0, payload: ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8])),
            Frame(
                type: FrameType(rawValue: 0x42),
                flags: FrameFlags(rawValue: 0xf0),
                streamID: 0,
                payload: ByteBuffer(string: "future")
            ),
            Frame(type: .rstStream, streamID: 3, payload: ByteBuffer(bytes: [0, 0, 0, 1])),
            Frame(type: .goAway, streamID: 0, payload: ByteBuffer(bytes: [0, 0, 0, 3, 0, 0, 0, 0])),
            Frame(type: .halfClose, streamID: 5, payload: ByteBuffer()),
        ]
    }

    static func encoded(_ frames: [Frame]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for frame in frames { buffer.writeFrame(frame) }
        return buffer
    }

    // MARK: ByteToMessageDecoderVerifier

    @Test("verifier: single frames and coalesced pairs, drip-fed and all at once")
    func verifierWithoutPreface() throws {
        let frames = Self.sampleFrames()
        var pairs = frames.map { (Self.encoded([$0]), [$0]) }
        pairs.append((Self.encoded([frames[2], frames[3]]), [frames[2], frames[3]]))
        pairs.append((Self.encoded([frames[1], frames[9], frames[4]]), [frames[1], frames[9], frames[4]]))
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) {
            FrameDecoder(maxFrameSize: 65_536, expectPreface: false)
        }
    }

    @Test("verifier: frames at the smallest MAX_FRAME_SIZE")
    func verifierAtSmallLimit() throws {
        let frames = [
            Frame(type: .message, streamID: 1, payload: ByteBuffer(repeating: 1, count: 1_000)),
            Frame(type: .message, flags: .more, streamID: 7, payload: ByteBuffer(repeating: 2, count: 17)),
            Frame(type: .windowUpdate, streamID: 0, payload: ByteBuffer(bytes: [0, 1, 0, 0])),
        ]
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: frames.map { (Self.encoded([$0]), [$0]) }) {
            FrameDecoder(maxFrameSize: 16_384, expectPreface: true).skippingPreface()
        }
    }

    // MARK: Preface

    @Test("preface then frames: drip-fed, all at once and in uneven chunks through ByteToMessageHandler")
    func prefaceThenFrames() throws {
        let frames = Self.sampleFrames()
        var stream = ByteBuffer(bytes: Preface.bytes)
        var body = Self.encoded(frames)
        stream.writeBuffer(&body)
        let bytes = Array(stream.readableBytesView)

        for chunking in [[1], [bytes.count], [3, 7, 1, 12, 5, 40, 2], [8, 12], [13]] {
            let channel = EmbeddedChannel(
                handler: ByteToMessageHandler(FrameDecoder(maxFrameSize: 65_536, expectPreface: true))
            )
            var offset = 0
            var step = 0
            while offset < bytes.count {
                let size = min(chunking[step % chunking.count], bytes.count - offset)
                try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<(offset + size)]))
                offset += size
                step += 1
            }
            var decoded: [Frame] = []
            while let frame = try channel.readInbound(as: Frame.self) { decoded.append(frame) }
            #expect(decoded == frames, "chunking \(chunking)")
            #expect(try channel.finish().isClean)
        }
    }

    @Test("the preface alone produces nothing and is consumed")
    func prefaceAlone() throws {
        var decoder = FrameDecoder(maxFrameSize: 65_536, expectPreface: true)
        var buffer = ByteBuffer(bytes: Preface.bytes)
        #expect(try decoder.decodeFrame(&buffer) == nil)
        #expect(buffer.readableBytes == 0)
        // A second preface is not expected: its bytes are now a frame header.
        buffer.writeBytes(Bytes.frame(type: 0x07, stream: 0, payload: [0, 0, 0, 0, 0, 0, 0, 0]))
        #expect(try decoder.decodeFrame(&buffer)?.type == .ping)
    }

    static let badPrefaces: [(String, [UInt8])] = [
        ("HTTP/1.1", Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
        ("TLS ClientHello", [0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]),
        ("HTTP/2 preface", Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)),
        ("Skiff version 2", [0x89, 0x53, 0x4b, 0x46, 0x02, 0x00, 0x00, 0x00]),
        ("lowercase skf", [0x89, 0x73, 0x6b, 0x66, 0x01, 0x00, 0x00, 0x00]),
        ("non-zero padding", [0x89, 0x53, 0x4b, 0x46, 0x01, 0x00, 0x00, 0x01]),
        ("a frame instead of the preface", Bytes.frame(type: 0x01, stream: 0)),
    ]

    @Test("a wrong preface byte throws .badPreface as soon as it arrives", arguments: badPrefaces)
    func badPrefaceDripFed(name: String, input: [UInt8]) throws {
        let firstBad = try #require(
            zip(input, Preface.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        )
        var decoder = FrameDecoder(maxFrameSize: 65_536, expectPreface: true)
        var buffer = ByteBuffer()
        for (index, byte) in input.enumerated() {
            buffer.writeInteger(byte)
            if index < firstBad {
                #expect(try decoder.decodeFrame(&buffer) == nil, "\(name): byte \(index) is still a valid prefix")
            } else {
                #expect(throws: FrameDecodingError.badPreface, "\(name): byte \(index)") {
                    try decoder.decodeFrame(&buffer)
                }
                return
            }
        }
        Issue.record("\(name): never rejected")
    }

    @Test("the first byte of a non-Skiff protocol is rejected through the channel handler", arguments: badPrefaces)
    func badPrefaceThroughHandler(name: String, input: [UInt8]) throws {
        let firstBad = try #require(
            zip(input, Preface.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        )
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(maxFrameSize: 65_536, expectPreface: true))
        )
        defer { _ = try? channel.finish() }
        if firstBad > 0 { try channel.writeInbound(ByteBuffer(bytes: input[..<firstBad])) }
        #expect(throws: FrameDecodingError.badPreface, "\(name)") {
            try channel.writeInbound(ByteBuffer(bytes: [input[firstBad]]))
        }
    }

    // MARK: Frame size

    @Test(
        "an oversize frame throws .frameTooLarge from the 12-byte header alone",
        arguments: [UInt32(16_385), 65_536, .max]
    )
    func oversizeFromHeaderOnly(length: UInt32) throws {
        var decoder = FrameDecoder(maxFrameSize: 16_384, expectPreface: false)
        var buffer = ByteBuffer(bytes: Bytes.frame(length: length, type: 0x03, stream: 1))
        #expect(buffer.readableBytes == Frame.headerSize)
        #expect(throws: FrameDecodingError.frameTooLarge(length: length, limit: 16_384)) {
            try decoder.decodeFrame(&buffer)
        }
    }

    @Test("an oversize frame after the preface is rejected through the handler without its payload")
    func oversizeThroughHandler() throws {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(FrameDecoder(maxFrameSize: 65_536, expectPreface: true))
        )
        defer { _ = try? channel.finish() }
        try channel.writeInbound(ByteBuffer(bytes: Preface.bytes))
        #expect(throws: FrameDecodingError.frameTooLarge(length: 65_537, limit: 65_536)) {
            try channel.writeInbound(ByteBuffer(bytes: Bytes.frame(length: 65_537, type: 0x03, stream: 1)))
        }
    }

    @Test("a frame of exactly MAX_FRAME_SIZE is accepted once complete")
    func exactLimit() throws {
        var decoder = FrameDecoder(maxFrameSize: 16_384, expectPreface: false)
        let payload = [UInt8](repeating: 0xab, count: 16_384)
        let bytes = Bytes.frame(type: 0x03, flags: 0x04, stream: 9, payload: payload)
        var buffer = ByteBuffer(bytes: bytes.dropLast())
        #expect(try decoder.decodeFrame(&buffer) == nil)
        #expect(buffer.readableBytes == bytes.count - 1, "nothing is consumed until the frame is complete")
        buffer.writeInteger(bytes.last!)
        let frame = try #require(try decoder.decodeFrame(&buffer))
        #expect(frame.type == .message)
        #expect(frame.flags == .more)
        #expect(frame.streamID == 9)
        #expect(Array(frame.payload.readableBytesView) == payload)
        #expect(buffer.readableBytes == 0)
    }

    @Test("lowering maxFrameSize (after the SETTINGS ACK) applies to the next frame")
    func lowerLimitLater() throws {
        var decoder = FrameDecoder(maxFrameSize: 65_536, expectPreface: false)
        var buffer = ByteBuffer(bytes: Bytes.frame(type: 0x03, stream: 1, payload: .init(repeating: 0, count: 20_000)))
        #expect(try decoder.decodeFrame(&buffer)?.payload.readableBytes == 20_000)
        decoder.maxFrameSize = 16_384
        buffer.writeBytes(Bytes.frame(length: 20_000, type: 0x03, stream: 1))
        #expect(throws: FrameDecodingError.frameTooLarge(length: 20_000, limit: 16_384)) {
            try decoder.decodeFrame(&buffer)
        }
    }

    // MARK: Shapes

    @Test("an unknown frame type is decoded as a Frame with that type", arguments: [UInt8(0x00), 0x0a, 0x42, 0xff])
    func unknownType(raw: UInt8) throws {
        let frames = try decodeFrames(
            Bytes.frame(type: raw, stream: 0, payload: [1, 2, 3]) + Bytes.frame(type: raw, flags: 0xff, stream: 7)
        )
        try #require(frames.count == 2)
        #expect(frames[0].type.rawValue == raw)
        #expect(!frames[0].type.isKnown)
        #expect(frames[0].type.description == "UNKNOWN(0x\(String(raw, radix: 16)))")
        #expect(Array(frames[0].payload.readableBytesView) == [1, 2, 3])
        #expect(frames[1].streamID == 7)
        #expect(frames[1].flags.rawValue == 0xff)
        #expect(frames[1].payload.readableBytes == 0)
    }

    @Test("known types and their names")
    func knownTypes() {
        let names = [
            "SETTINGS", "HEADERS", "MESSAGE", "TRAILERS", "RST_STREAM", "WINDOW_UPDATE", "PING", "GOAWAY", "HALF_CLOSE",
        ]
        for (offset, name) in names.enumerated() {
            let type = FrameType(rawValue: UInt8(offset + 1))
            #expect(type.isKnown)
            #expect(type.description == name)
        }
    }

    @Test("zero-length frames back to back each decode with an empty payload")
    func zeroLengthFrames() throws {
        let bytes =
            Bytes.frame(type: 0x01, flags: 0x01, stream: 0) + Bytes.frame(type: 0x09, stream: 5)
            + Bytes.frame(type: 0x03, flags: 0x01, stream: 1) + Bytes.frame(type: 0x02, stream: 3)
        let frames = try decodeFrames(bytes)
        #expect(frames.map(\.type) == [.settings, .halfClose, .message, .headers])
        #expect(frames.map(\.streamID) == [0, 5, 1, 3])
        #expect(frames.allSatisfy { $0.payload.readableBytes == 0 })
    }

    @Test("the reserved field is ignored and unknown flag bits are kept")
    func reservedAndFlags() throws {
        let frames = try decodeFrames(
            Bytes.frame(type: 0x03, flags: 0xf9, reserved: 0xffff, stream: 0x7fff_ffff, payload: [7])
        )
        let frame = try #require(frames.first)
        #expect(frame.type == .message)
        #expect(frame.flags.rawValue == 0xf9)
        #expect(frame.flags.contains(.endStream))
        #expect(!frame.flags.contains(.compressed))
        #expect(frame.streamID == 0x7fff_ffff)
        #expect(Array(frame.payload.readableBytesView) == [7])
    }

    @Test("an incomplete header or payload consumes nothing", arguments: [0, 1, 4, 11, 12, 13, 19])
    func incompleteFrame(available: Int) throws {
        let bytes = Bytes.frame(type: 0x07, stream: 0, payload: [1, 2, 3, 4, 5, 6, 7, 8])
        var decoder = FrameDecoder(maxFrameSize: 16_384, expectPreface: false)
        var buffer = ByteBuffer(bytes: bytes[..<available])
        #expect(try decoder.decodeFrame(&buffer) == nil)
        #expect(buffer.readableBytes == available)
    }

    @Test("decodeFrame takes one frame and leaves the rest")
    func oneFrameAtATime() throws {
        var decoder = FrameDecoder(maxFrameSize: 16_384, expectPreface: false)
        var buffer = ByteBuffer(
            bytes: Bytes.frame(type: 0x09, stream: 1) + Bytes.frame(type: 0x06, stream: 0, payload: [0, 0, 0, 1])
        )
        #expect(try decoder.decodeFrame(&buffer)?.type == .halfClose)
        #expect(buffer.readableBytes == 16)
        #expect(try decoder.decodeFrame(&buffer)?.type == .windowUpdate)
        #expect(try decoder.decodeFrame(&buffer) == nil)
    }

    @Test("encoder and decoder agree on the header layout")
    func headerLayout() {
        let bytes = Bytes.written {
            $0.writeFrameHeader(length: 0x0102_0304, type: .goAway, flags: .ack, streamID: 0x0a0b_0c0d)
        }
        #expect(bytes == [0x01, 0x02, 0x03, 0x04, 0x08, 0x01, 0x00, 0x00, 0x0a, 0x0b, 0x0c, 0x0d])
        #expect(Frame.headerSize == 12)
        #expect(Preface.bytes == [0x89, 0x53, 0x4b, 0x46, 0x01, 0x00, 0x00, 0x00])
    }
}

extension FrameDecoder {
    /// A decoder that has already seen the preface (decodes the preface from a private buffer).
    fileprivate func skippingPreface() -> FrameDecoder {
        var decoder = self
        var preface = ByteBuffer(bytes: Preface.bytes)
        _ = try! decoder.decodeFrame(&preface)
        return decoder
    }
}
