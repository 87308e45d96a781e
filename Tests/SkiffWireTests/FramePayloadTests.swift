import NIOCore
import SkiffCore
import SkiffWire
import Testing

@Suite("FramePayload parsers")
struct FramePayloadTests {
    /// `u16 key_len, key, u32 value_len, value`.
    static func entry(_ key: String, _ value: [UInt8]) -> [UInt8] {
        Bytes.u16(UInt16(key.utf8.count)) + Array(key.utf8) + Bytes.u32(UInt32(value.count)) + value
    }

    static func entry(_ key: String, _ value: String) -> [UInt8] { entry(key, Array(value.utf8)) }

    /// A server HEADERS payload (no path) around a raw metadata block.
    static func headers(block: [UInt8]) -> Frame { .raw(.headers, [0, 0] + block) }

    // MARK: SETTINGS

    @Test("SETTINGS: pairs in order, duplicates and unknown ids kept for the caller")
    func settingsPairs() throws {
        let payload = [0, 1, 0, 0, 0x40, 0] + [0, 0x63, 0xff, 0xff, 0xff, 0xff] + [0, 1, 0, 1, 0, 0] as [UInt8]
        let pairs = try FramePayload.settings(.raw(.settings, stream: 0, payload))
        #expect(pairs.map(\.0) == [1, 0x63, 1])
        #expect(pairs.map(\.1) == [0x4000, 0xffff_ffff, 0x1_0000])
        #expect(try FramePayload.settings(.raw(.settings, stream: 0, [])).isEmpty)
    }

    @Test("SETTINGS: a payload that is not a multiple of 6 is a violation", arguments: [1, 5, 7, 11, 13])
    func settingsBadLength(length: Int) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.settings(.raw(.settings, stream: 0, .init(repeating: 0, count: length)))
        }
    }

    @Test("SETTINGS ACK: empty is fine, any payload is a violation", arguments: [1, 6, 12])
    func settingsAckWithPayload(length: Int) throws {
        #expect(try FramePayload.settings(.raw(.settings, flags: .ack, stream: 0, [])).isEmpty)
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.settings(.raw(.settings, flags: .ack, stream: 0, .init(repeating: 0, count: length)))
        }
    }

    // MARK: HEADERS and the metadata block

    static let malformedHeaders: [(String, [UInt8])] = [
        ("empty payload", [] as [UInt8]),
        ("half a path length", [0x00]),
        ("path past the end", [0x00, 0x05, 0x2f, 0x61]),
        ("no metadata count", [0x00, 0x01, 0x2f]),
        ("half a metadata count", [0x00, 0x01, 0x2f, 0x00]),
        ("count 1, no entries", [0x00, 0x00, 0x00, 0x01]),
        ("count 2, one entry", [0x00, 0x00, 0x00, 0x02] + entry("a", "b")),
        ("count 0xffff, one entry", [0x00, 0x00, 0xff, 0xff] + entry("a", "b")),
        ("key length past the end", [0x00, 0x00, 0x00, 0x01, 0x00, 0x09, 0x61, 0x62]),
        ("value length missing", [0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00, 0x00]),
        (
            "value length past the end by one",
            [0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x61, 0x00, 0x00, 0x00, 0x03, 0x62, 0x63]
        ),
        ("value length u32 max", [0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x61, 0xff, 0xff, 0xff, 0xff, 0x62]),
        ("value length 2^31", [0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x61, 0x80, 0x00, 0x00, 0x00]),
        ("one byte after the block", [0x00, 0x00, 0x00, 0x01] + entry("a", "b") + [0x00]),
        ("a second block after the block", [0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ]

    @Test(
        "HEADERS: malformed payloads are violations",
        arguments: malformedHeaders
    )
    func headersMalformed(name: String, payload: [UInt8]) {
        #expect(throws: ProtocolViolation.self, "\(name)") { try FramePayload.headers(.raw(.headers, payload)) }
    }

    @Test("HEADERS: path and metadata decode; encodedSize is the block size")
    func headersDecode() throws {
        let block = [0x00, 0x02] + Self.entry("authorization", "Bearer t0k3n") + Self.entry("x-id", "")
        let payload = [0x00, 0x04] + Array("/a/b".utf8) + block
        let (path, decoded) = try FramePayload.headers(.raw(.headers, payload))
        #expect(path == "/a/b")
        #expect(entries(decoded.metadata) == ["authorization=Bearer t0k3n", "x-id="])
        #expect(decoded.encodedSize == block.count)
        #expect(decoded.encodedSize == decoded.metadata.encodedSize)
        #expect(decoded.invalidEntry == nil)
    }

    static let invalidEntries: [(String, [UInt8])] = [
        ("uppercase key", entry("X-Request-Id", "abc")),
        ("empty key", entry("", "abc")),
        ("space in key", entry("x id", "abc")),
        ("colon key", entry(":authority", "abc")),
        ("non-ASCII key", entry("clé", "abc")),
        ("newline in value", entry("x-id", "a\nb")),
        ("tab in value", entry("x-id", "a\tb")),
        ("DEL in value", entry("x-id", [0x61, 0x7f])),
        ("NUL in value", entry("x-id", [0x00])),
        ("UTF-8 value", entry("x-id", "café")),
        ("invalid UTF-8 value", entry("x-id", [0xff, 0xfe])),
        ("uppercase -BIN key", entry("x-BIN", [0x00])),
    ]

    @Test(
        "an invalid key or a non-printable text value is reported in invalidEntry, not thrown",
        arguments: invalidEntries
    )
    func invalidEntryReported(name: String, entryBytes: [UInt8]) throws {
        let block = [0x00, 0x02] + Self.entry("ok", "fine") + entryBytes
        let (_, decoded) = try FramePayload.headers(Self.headers(block: block))
        #expect(decoded.invalidEntry != nil, "\(name)")
        #expect(decoded.metadata.count == 2, "\(name): the entries are still returned")
        #expect(decoded.encodedSize == block.count)
    }

    @Test("the first invalid entry is the one reported")
    func firstInvalidEntryReported() throws {
        let block = [0x00, 0x03] + Self.entry("x-ok", "1") + Self.entry("Bad-One", "1") + Self.entry("Bad-Two", "1")
        let (_, decoded) = try FramePayload.headers(Self.headers(block: block))
        let reason = try #require(decoded.invalidEntry)
        #expect(reason.contains("Bad-One"))
        #expect(!reason.contains("Bad-Two"))
    }

    @Test("-bin values are kept as raw bytes, even when they look like text")
    func binaryValues() throws {
        let all = [UInt8](0...255)
        let block = [0x00, 0x03] + Self.entry("blob-bin", all) + Self.entry("text-bin", "abc") + Self.entry("-bin", [])
        let (_, decoded) = try FramePayload.headers(Self.headers(block: block))
        #expect(decoded.invalidEntry == nil)
        #expect(decoded.metadata.map(\.value) == [.binary(all), .binary(Array("abc".utf8)), .binary([])])
    }

    @Test("order and duplicates are kept; the first of a reserved key counts")
    func orderAndDuplicates() throws {
        var metadata = Metadata()
        metadata.add("grpc-timeout", "1S")
        metadata.add("b", "1")
        metadata.add("a", "2")
        metadata.add("b", "3")
        metadata.add("grpc-timeout", "9H")
        metadata.add("a-bin", binary: [1])
        metadata.add("a-bin", binary: [2])
        var buffer = ByteBuffer()
        buffer.writeHeaders(streamID: 1, path: "/s/m", metadata: metadata)
        let frame = try #require(try decodeFrames(Array(buffer.readableBytesView)).first)
        let (path, decoded) = try FramePayload.headers(frame)
        #expect(path == "/s/m")
        #expect(decoded.metadata == metadata)
        #expect(decoded.metadata.first("grpc-timeout") == "1S")
        #expect(decoded.metadata.values("b") == ["1", "3"])
    }

    static let metadataSamples: [Metadata] = {
        var many = Metadata()
        for i in 0..<300 { many.add("key-\(i)", String(repeating: "v", count: i)) }
        var mixed = Metadata()
        mixed.add("authorization", "Bearer x")
        mixed.add("grpc-status-details-bin", binary: [0x08, 0x05, 0x12, 0x00])
        mixed.add("e", "")
        return [Metadata(), ["a": "b"], many, mixed, ["big-bin": .binary(.init(repeating: 0xee, count: 70_000))]]
    }()

    @Test("encodedSize matches Metadata.encodedSize and the bytes written", arguments: metadataSamples)
    func encodedSizeAgrees(metadata: Metadata) throws {
        var block = ByteBuffer()
        block.writeMetadataBlock(metadata)
        #expect(block.readableBytes == metadata.encodedSize)

        var buffer = ByteBuffer()
        buffer.writeTrailers(streamID: 1, status: .ok, message: "m", metadata: metadata)
        let frame = try #require(try decodeFrames(Array(buffer.readableBytesView), maxFrameSize: 1 << 24).first)
        let (_, _, decoded) = try FramePayload.trailers(frame)
        #expect(decoded.encodedSize == metadata.encodedSize)
        #expect(decoded.metadata == metadata)
        #expect(frame.payload.readableBytes == 6 + 1 + metadata.encodedSize)
    }

    // MARK: TRAILERS

    static let malformedTrailers: [(String, [UInt8])] = [
        ("empty", [] as [UInt8]),
        ("status only", [0x00, 0x00, 0x00, 0x00]),
        ("half a message length", [0x00, 0x00, 0x00, 0x00, 0x00]),
        ("message past the end", [0x00, 0x00, 0x00, 0x05, 0x00, 0x03, 0x61]),
        ("no metadata block", [0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 0x61]),
        ("metadata count past the end", [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01]),
        ("bytes after the block", [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
    ]

    @Test(
        "TRAILERS: truncated or overlong payloads are violations",
        arguments: malformedTrailers
    )
    func trailersMalformed(name: String, payload: [UInt8]) {
        #expect(throws: ProtocolViolation.self, "\(name)") { try FramePayload.trailers(.raw(.trailers, payload)) }
    }

    @Test("TRAILERS: unknown status codes and UTF-8 messages survive the round trip")
    func trailersRoundTrip() throws {
        var buffer = ByteBuffer()
        buffer.writeTrailers(
            streamID: 3,
            status: StatusCode(rawValue: 99),
            message: "naïve – ünïcode ✓",
            metadata: ["k": "v"]
        )
        let frame = try #require(try decodeFrames(Array(buffer.readableBytesView)).first)
        let (status, message, decoded) = try FramePayload.trailers(frame)
        #expect(status.rawValue == 99)
        #expect(status.name == "CODE_99")
        #expect(message == "naïve – ünïcode ✓")
        #expect(entries(decoded.metadata) == ["k=v"])
    }

    @Test("TRAILERS: a status message over 65,535 bytes is cut at a character boundary")
    func trailersLongMessage() throws {
        // 32,769 × "é" = 65,538 bytes: two characters must go.
        let twoByte = try trailersMessage(after: String(repeating: "é", count: 32_769))
        #expect(twoByte.utf8.count == 65_534)
        #expect(twoByte.allSatisfy { $0 == "é" })
        // "e" + U+0301 is one character of 3 bytes: 21,846 of them = 65,538 bytes, one must go,
        // leaving exactly 65,535 bytes and no dangling combining mark.
        let combining = try trailersMessage(after: String(repeating: "e\u{301}", count: 21_846))
        #expect(combining.utf8.count == 65_535)
        #expect(combining.count == 21_845)
        // Exactly 65,535 bytes are kept as they are.
        let exact = String(repeating: "a", count: 65_535)
        #expect(try trailersMessage(after: exact) == exact)
    }

    /// writeTrailers cuts an over-long message with `while text.utf8.count > 65_535 { text = text.dropLast() }`.
    /// Each `Substring.dropLast()` call walks the whole text (≈0.3 ms for 66 KB, with or without -O), so
    /// the cut is quadratic: an 80 KB message took ~5 s in a debug build, and a 1 MB message would block
    /// the event loop for far longer.
    @Test("TRAILERS: cutting a long status message takes time linear in its length")
    func trailersLongMessageIsFast() throws {
        let message = String(repeating: "x", count: 65_535 + 600)
        let clock = ContinuousClock()
        var buffer = ByteBuffer()
        let elapsed = clock.measure {
            buffer.writeTrailers(streamID: 1, status: .internal, message: message, metadata: [:])
        }
        #expect(buffer.readableBytes == Frame.headerSize + 6 + 65_535 + 2)
        #expect(elapsed < .milliseconds(100), "cutting 600 excess bytes took \(elapsed)")
    }

    private func trailersMessage(after message: String) throws -> String {
        var buffer = ByteBuffer()
        buffer.writeTrailers(streamID: 1, status: .internal, message: message, metadata: [:])
        let frame = try #require(try decodeFrames(Array(buffer.readableBytesView), maxFrameSize: 1 << 20).first)
        return try FramePayload.trailers(frame).message
    }

    // MARK: RST_STREAM, WINDOW_UPDATE, PING, GOAWAY, HALF_CLOSE

    @Test("RST_STREAM: fewer than 4 bytes is a violation", arguments: [0, 1, 2, 3])
    func rstStreamShort(length: Int) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.rstStream(.raw(.rstStream, .init(repeating: 0, count: length)))
        }
    }

    @Test("RST_STREAM: the reason is optional")
    func rstStreamReason() throws {
        let bare = try FramePayload.rstStream(.raw(.rstStream, [0, 0, 0, 8]))
        #expect(bare.status == .resourceExhausted && bare.reason == "")
        let text = try FramePayload.rstStream(.raw(.rstStream, [0, 0, 0, 1] + Array("bye".utf8)))
        #expect(text.status == .cancelled && text.reason == "bye")
    }

    @Test("WINDOW_UPDATE: 0, 2^31 and above are violations", arguments: [UInt32(0), 0x8000_0000, 0x8000_0001, .max])
    func windowUpdateOutOfRange(increment: UInt32) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.windowUpdate(.raw(.windowUpdate, stream: 0, Bytes.u32(increment)))
        }
    }

    @Test("WINDOW_UPDATE: 1 and 2^31-1 are the edges of the range")
    func windowUpdateEdges() throws {
        #expect(try FramePayload.windowUpdate(.raw(.windowUpdate, stream: 0, Bytes.u32(1))) == 1)
        #expect(try FramePayload.windowUpdate(.raw(.windowUpdate, stream: 3, Bytes.u32(0x7fff_ffff))) == 0x7fff_ffff)
    }

    @Test("WINDOW_UPDATE: a payload that is not 4 bytes is a violation", arguments: [0, 3, 5, 8])
    func windowUpdateWrongSize(length: Int) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.windowUpdate(.raw(.windowUpdate, stream: 0, .init(repeating: 1, count: length)))
        }
    }

    @Test("PING: a payload that is not 8 bytes is a violation", arguments: [0, 1, 7, 9, 16])
    func pingWrongSize(length: Int) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.ping(.raw(.ping, stream: 0, .init(repeating: 1, count: length)))
        }
    }

    @Test("PING: the 8 opaque bytes round-trip")
    func pingRoundTrip() throws {
        for data: UInt64 in [0, 1, 0xdead_beef_cafe_f00d, .max] {
            let frame = try #require(try decodeFrames(Bytes.written { $0.writePing(data, ack: true) }).first)
            #expect(frame.flags == .ack)
            #expect(try FramePayload.ping(frame) == data)
        }
    }

    @Test("GOAWAY: fewer than 8 bytes is a violation", arguments: [0, 4, 7])
    func goAwayShort(length: Int) {
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.goAway(.raw(.goAway, stream: 0, .init(repeating: 0, count: length)))
        }
    }

    @Test("GOAWAY: debug text is optional")
    func goAwayDebug() throws {
        let bare = try FramePayload.goAway(.raw(.goAway, stream: 0, [0, 0, 0, 0, 0, 0, 0, 8]))
        #expect(bare.lastStreamID == 0 && bare.status == .resourceExhausted && bare.debug == "")
        let text = try FramePayload.goAway(
            .raw(.goAway, stream: 0, [0, 0, 0, 9, 0, 0, 0, 8] + Array("too_many_pings".utf8))
        )
        #expect(text.lastStreamID == 9 && text.debug == "too_many_pings")
    }

    @Test("HALF_CLOSE: any payload is a violation", arguments: [1, 4])
    func halfCloseWithPayload(length: Int) throws {
        try FramePayload.halfClose(.raw(.halfClose, []))
        #expect(throws: ProtocolViolation.self) {
            try FramePayload.halfClose(.raw(.halfClose, .init(repeating: 0, count: length)))
        }
    }
}
