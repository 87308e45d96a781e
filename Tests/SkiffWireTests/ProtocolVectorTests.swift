import Foundation
import NIOCore
import SkiffCore
import SkiffWire
import Testing

/// Checks the hex vectors of docs/PROTOCOL.md §9 against the encoder and the decoder, so the
/// document and the codec cannot drift apart silently.
@Suite("Protocol vectors (docs/PROTOCOL.md)")
struct ProtocolVectorTests {
    @Test("the document holds exactly the vectors this test knows, with matching titles")
    func documentListsKnownVectors() throws {
        let vectors = try VectorDocument.load()
        #expect(
            vectors.count >= VectorSpec.all.count,
            "docs/PROTOCOL.md has \(vectors.count) vectors; the test expects \(VectorSpec.all.count)"
        )
        #expect(vectors.map(\.number) == VectorSpec.all.map(\.number))
        for spec in VectorSpec.all {
            guard let vector = vectors.first(where: { $0.number == spec.number }) else {
                Issue.record("V\(spec.number) (\(spec.kind)) is missing from docs/PROTOCOL.md")
                continue
            }
            #expect(
                vector.label.hasPrefix(spec.kind + " ") || vector.label == spec.kind,
                "V\(spec.number) is titled \"\(vector.label)\"; the test expects a \(spec.kind) vector"
            )
        }
    }

    @Test("the encoder writes each vector's bytes", arguments: VectorSpec.all.map(\.number))
    func encoderProducesVector(number: Int) throws {
        let spec = try #require(VectorSpec.all.first { $0.number == number })
        let vector = try VectorDocument.vector(number)
        let encoded = Bytes.written(spec.encode)
        #expect(
            encoded == vector.bytes,
            "V\(number): encoder wrote \(Bytes.hexString(encoded)), document has \(Bytes.hexString(vector.bytes))"
        )
    }

    @Test("the decoder reads each vector back to its fields", arguments: VectorSpec.all.map(\.number))
    func decoderReadsVector(number: Int) throws {
        let spec = try #require(VectorSpec.all.first { $0.number == number })
        let vector = try VectorDocument.vector(number)
        if spec.isPreface {
            var decoder = FrameDecoder(maxFrameSize: 65_536, expectPreface: true)
            var buffer = ByteBuffer(bytes: vector.bytes)
            #expect(try decoder.decodeFrame(&buffer) == nil)
            #expect(buffer.readableBytes == 0, "the preface is consumed whole")
            return
        }
        let frames = try decodeFrames(vector.bytes)
        try #require(frames.count == 1, "V\(number) is one frame")
        #expect(frames[0].payload.readableBytes + Frame.headerSize == vector.bytes.count)
        try spec.check(frames[0])
    }

    @Test("all vectors decode as one connection byte stream, fed one byte at a time")
    func vectorsAsOneStream() throws {
        let vectors = try VectorDocument.load()
        var decoder = FrameDecoder(maxFrameSize: 65_536, expectPreface: true)
        var buffer = ByteBuffer()
        var frames: [Frame] = []
        for byte in vectors.flatMap(\.bytes) {
            buffer.writeInteger(byte)
            while let frame = try decoder.decodeFrame(&buffer) { frames.append(frame) }
        }
        #expect(buffer.readableBytes == 0)
        #expect(frames.count == vectors.count - 1)
        #expect(frames.first?.type == .settings)
    }

    @Test("the §6 example: client bytes are V1 V2 V4 V5, server answer V6 V7 V8")
    func unaryExampleExchange() throws {
        let client = try [1, 2, 4, 5].flatMap { try VectorDocument.vector($0).bytes }
        let written = Bytes.written { buffer in
            buffer.writePreface()
            buffer.writeSettings(ConnectionSettings.protocolDefaults.encodedPairs)
            buffer.writeHeaders(
                streamID: 1,
                path: "/skiff.testing.v1.TestService/EmptyCall",
                metadata: ["grpc-timeout": "1S"]
            )
            buffer.writeMessageFrame(streamID: 1, flags: .endStream, bytes: ByteBuffer())
        }
        #expect(written == client)
        let server = try [6, 7, 8].flatMap { try VectorDocument.vector($0).bytes }
        let frames = try decodeFrames(server)
        #expect(frames.map(\.type) == [.headers, .message, .trailers])
        #expect(frames.allSatisfy { $0.streamID == 1 && !$0.flags.contains(.endStream) })
        #expect(try FramePayload.trailers(frames[2]).status == .ok)
    }

    @Test("the fragment pair V18 + V19 reassembles to a Payload with body \"hello\"")
    func fragmentPairReassembles() throws {
        let first = try decodeFrames(VectorDocument.vector(18).bytes)[0]
        let last = try decodeFrames(VectorDocument.vector(19).bytes)[0]
        #expect(first.flags.contains(.more) && !first.flags.contains(.endStream))
        #expect(!last.flags.contains(.more) && last.flags.contains(.endStream))
        var message = first.payload
        var tail = last.payload
        message.writeBuffer(&tail)
        #expect(Array(message.readableBytesView) == [0x0a, 0x05] + Array("hello".utf8))
    }
}

/// The strict format parser is itself tested, so a sloppy edit of the document is caught.
@Suite("Vector block format")
struct VectorFormatTests {
    private func block(_ body: String) -> String { "intro\n\n```skiff-vectors\n" + body + "\n```\n" }

    @Test func wellFormedBlockParses() throws {
        let vectors = try VectorDocument.parse(block("V1 A\n00 01\nff\n\nV2 B C\n0a"))
        #expect(vectors.map(\.number) == [1, 2])
        #expect(vectors.map(\.label) == ["A", "B C"])
        #expect(vectors[0].bytes == [0x00, 0x01, 0xff])
        #expect(vectors[1].bytes == [0x0a])
    }

    @Test(
        "malformed blocks are rejected",
        arguments: [
            "V1 A\n00 0G",  // not hex
            "V1 A\n00 0A",  // uppercase
            "V1 A\n00  01",  // double space
            "V1 A\n00 01 ",  // trailing space
            "V1 A\n001",  // odd digits
            "V1 A",  // no bytes
            "V1 A\n00\nV2 B\n01",  // no blank line between vectors
            "V1 A\n00\n\n\nV2 B\n01",  // two blank lines
            "V1 A\n00\n\nV3 B\n01",  // skipped number
            "V01 A\n00",  // leading zero
            "V1\n00",  // no label
            "V1 A \n00",  // trailing space in title
            "V2 A\n00",  // does not start at 1
            "# comment\nV1 A\n00",  // stray line
        ]
    )
    func malformedBlockRejected(body: String) {
        #expect(throws: VectorFormatError.self) { try VectorDocument.parse(block(body)) }
    }

    @Test func missingOrDuplicateBlockRejected() {
        #expect(throws: VectorFormatError.self) { try VectorDocument.parse("no vectors here\n") }
        let twice = block("V1 A\n00") + block("V1 A\n00")
        #expect(throws: VectorFormatError.self) { try VectorDocument.parse(twice) }
        #expect(throws: VectorFormatError.self) { try VectorDocument.parse("```skiff-vectors\nV1 A\n00\n") }
    }
}

// MARK: - The document

struct DocVector: Sendable {
    var number: Int
    var label: String
    var bytes: [UInt8]
}

struct VectorFormatError: Error, CustomStringConvertible {
    var line: Int
    var message: String
    var description: String { "docs/PROTOCOL.md vector block, line \(line): \(message)" }
}

enum VectorDocument {
    /// docs/PROTOCOL.md, found from this file: Tests/SkiffWireTests/<file> → package root.
    static var path: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("docs").appendingPathComponent("PROTOCOL.md").path
    }

    static func load() throws -> [DocVector] {
        try parse(String(contentsOfFile: path, encoding: .utf8))
    }

    static func vector(_ number: Int) throws -> DocVector {
        guard let vector = try load().first(where: { $0.number == number }) else {
            throw VectorFormatError(line: 0, message: "V\(number) is missing")
        }
        return vector
    }

    /// Parses the single ```` ```skiff-vectors ```` block (format: docs/PROTOCOL.md §9).
    static func parse(_ text: String) throws -> [DocVector] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let opens = lines.indices.filter { lines[$0] == "```skiff-vectors" }
        guard opens.count == 1, let open = opens.first else {
            throw VectorFormatError(
                line: 0,
                message: "expected exactly one ```skiff-vectors block, found \(opens.count)"
            )
        }
        guard let close = lines[(open + 1)...].firstIndex(of: "```") else {
            throw VectorFormatError(line: open + 1, message: "the block is not closed")
        }
        var vectors: [DocVector] = []
        var current: DocVector?
        var previousBlank = false
        for index in (open + 1)..<close {
            let line = lines[index]
            let lineNumber = index + 1
            if line.isEmpty {
                guard let done = current, !done.bytes.isEmpty, !previousBlank else {
                    throw VectorFormatError(line: lineNumber, message: "unexpected empty line")
                }
                vectors.append(done)
                current = nil
                previousBlank = true
                continue
            }
            defer { previousBlank = false }
            if current == nil {
                current = try title(line, expecting: vectors.count + 1, at: lineNumber)
            } else if line.first == "V" {
                throw VectorFormatError(line: lineNumber, message: "a new vector needs an empty line before it")
            } else {
                current!.bytes += try byteLine(line, at: lineNumber)
            }
        }
        guard let last = current, !last.bytes.isEmpty, !previousBlank else {
            throw VectorFormatError(line: close + 1, message: "the block must end with a vector's byte line")
        }
        vectors.append(last)
        return vectors
    }

    private static func title(_ line: String, expecting number: Int, at lineNumber: Int) throws -> DocVector {
        let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].first == "V" else {
            throw VectorFormatError(
                line: lineNumber,
                message: "expected a title \"V\(number) <label>\", got \"\(line)\""
            )
        }
        let digits = parts[0].dropFirst()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), digits.first != "0",
            let parsed = Int(digits)
        else { throw VectorFormatError(line: lineNumber, message: "bad vector number in \"\(line)\"") }
        guard parsed == number else {
            throw VectorFormatError(line: lineNumber, message: "expected V\(number), found V\(parsed)")
        }
        let label = String(parts[1])
        guard !label.isEmpty, label.first != " ", label.last != " " else {
            throw VectorFormatError(line: lineNumber, message: "empty or padded label in \"\(line)\"")
        }
        return DocVector(number: parsed, label: label, bytes: [])
    }

    private static func byteLine(_ line: String, at lineNumber: Int) throws -> [UInt8] {
        let lowerHex = Set("0123456789abcdef")
        var bytes: [UInt8] = []
        for pair in line.split(separator: " ", omittingEmptySubsequences: false) {
            guard pair.count == 2, pair.allSatisfy({ lowerHex.contains($0) }), let byte = UInt8(pair, radix: 16) else {
                throw VectorFormatError(
                    line: lineNumber,
                    message: "\"\(line)\" is not two-digit lowercase hex bytes separated by single spaces"
                )
            }
            bytes.append(byte)
        }
        return bytes
    }
}

// MARK: - What each vector must be

struct VectorSpec: Sendable {
    var number: Int
    /// The first word of the vector's title in the document.
    var kind: String
    var isPreface = false
    var encode: @Sendable (inout ByteBuffer) -> Void
    var check: @Sendable (Frame) throws -> Void = { _ in }

    static let emptyCallPath = "/skiff.testing.v1.TestService/EmptyCall"

    static let all: [VectorSpec] = [
        VectorSpec(number: 1, kind: "PREFACE", isPreface: true, encode: { $0.writePreface() }),
        VectorSpec(
            number: 2,
            kind: "SETTINGS",
            encode: { $0.writeSettings([]) },
            check: { frame in
                expectHeader(frame, .settings, [], stream: 0)
                let pairs = try FramePayload.settings(frame)
                #expect(pairs.isEmpty)
                #expect(try ConnectionSettings.decode(pairs) == .protocolDefaults)
            }
        ),
        VectorSpec(
            number: 3,
            kind: "SETTINGS",
            encode: { $0.writeSettingsAck() },
            check: { frame in
                expectHeader(frame, .settings, .ack, stream: 0)
                let pairs = try FramePayload.settings(frame)
                #expect(pairs.isEmpty)
            }
        ),
        VectorSpec(
            number: 4,
            kind: "HEADERS",
            encode: { $0.writeHeaders(streamID: 1, path: emptyCallPath, metadata: ["grpc-timeout": "1S"]) },
            check: { frame in
                expectHeader(frame, .headers, [], stream: 1)
                #expect(frame.payload.readableBytes == 63)
                let (path, decoded) = try FramePayload.headers(frame)
                #expect(path == emptyCallPath)
                #expect(entries(decoded.metadata) == ["grpc-timeout=1S"])
                #expect(decoded.encodedSize == 22)
                #expect(decoded.invalidEntry == nil)
                #expect(decoded.metadata.first("grpc-timeout").flatMap(GRPCTimeout.parse) == .seconds(1))
            }
        ),
        VectorSpec(
            number: 5,
            kind: "MESSAGE",
            encode: { $0.writeMessageFrame(streamID: 1, flags: .endStream, bytes: ByteBuffer()) },
            check: { frame in
                expectHeader(frame, .message, .endStream, stream: 1)
                #expect(frame.payload.readableBytes == 0)
            }
        ),
        VectorSpec(
            number: 6,
            kind: "HEADERS",
            encode: { $0.writeHeaders(streamID: 1, metadata: [:]) },
            check: { frame in
                expectHeader(frame, .headers, [], stream: 1)
                let (path, decoded) = try FramePayload.headers(frame)
                #expect(path == "")
                #expect(decoded.metadata.isEmpty)
                #expect(decoded.encodedSize == 2)
            }
        ),
        VectorSpec(
            number: 7,
            kind: "MESSAGE",
            encode: { $0.writeMessageFrame(streamID: 1, flags: [], bytes: ByteBuffer()) },
            check: { frame in
                expectHeader(frame, .message, [], stream: 1)
                #expect(frame.payload.readableBytes == 0)
            }
        ),
        VectorSpec(
            number: 8,
            kind: "TRAILERS",
            encode: { $0.writeTrailers(streamID: 1, status: .ok, message: "", metadata: [:]) },
            check: { frame in
                expectHeader(frame, .trailers, [], stream: 1)
                let (status, message, decoded) = try FramePayload.trailers(frame)
                #expect(status == .ok)
                #expect(message == "")
                #expect(decoded.metadata.isEmpty)
                #expect(decoded.encodedSize == 2)
            }
        ),
        VectorSpec(
            number: 9,
            kind: "SETTINGS",
            encode: { buffer in
                var settings = ConnectionSettings()
                settings.maxFrameSize = 16_384
                settings.maxConcurrentStreams = 1_000
                buffer.writeSettings(settings.encodedPairs)
            },
            check: { frame in
                expectHeader(frame, .settings, [], stream: 0)
                let pairs = try FramePayload.settings(frame)
                #expect(pairs.map(\.0) == [1, 4])
                #expect(pairs.map(\.1) == [16_384, 1_000])
                var expected = ConnectionSettings()
                expected.maxFrameSize = 16_384
                expected.maxConcurrentStreams = 1_000
                #expect(try ConnectionSettings.decode(pairs) == expected)
            }
        ),
        VectorSpec(
            number: 10,
            kind: "TRAILERS",
            encode: {
                $0.writeTrailers(
                    streamID: 3,
                    status: .notFound,
                    message: "no such listing",
                    metadata: ["x-request-id": "abc"]
                )
            },
            check: { frame in
                expectHeader(frame, .trailers, [], stream: 3)
                let (status, message, decoded) = try FramePayload.trailers(frame)
                #expect(status == .notFound)
                #expect(status.name == "NOT_FOUND")
                #expect(message == "no such listing")
                #expect(entries(decoded.metadata) == ["x-request-id=abc"])
                #expect(decoded.encodedSize == 23)
                #expect(decoded.invalidEntry == nil)
            }
        ),
        VectorSpec(
            number: 11,
            kind: "RST_STREAM",
            encode: { $0.writeRSTStream(streamID: 3, status: .cancelled) },
            check: { frame in
                expectHeader(frame, .rstStream, [], stream: 3)
                let (status, reason) = try FramePayload.rstStream(frame)
                #expect(status == .cancelled)
                #expect(reason == "")
            }
        ),
        VectorSpec(
            number: 12,
            kind: "RST_STREAM",
            encode: { $0.writeRSTStream(streamID: 5, status: .unavailable, refused: true) },
            check: { frame in
                expectHeader(frame, .rstStream, .refused, stream: 5)
                let (status, reason) = try FramePayload.rstStream(frame)
                #expect(status == .unavailable)
                #expect(reason == "")
            }
        ),
        VectorSpec(
            number: 13,
            kind: "WINDOW_UPDATE",
            encode: { $0.writeWindowUpdate(streamID: 0, increment: 65_536) },
            check: { frame in
                expectHeader(frame, .windowUpdate, [], stream: 0)
                let increment = try FramePayload.windowUpdate(frame)
                #expect(increment == 65_536)
            }
        ),
        VectorSpec(
            number: 14,
            kind: "PING",
            encode: { $0.writePing(0x0102_0304_0506_0708, ack: false) },
            check: { frame in
                expectHeader(frame, .ping, [], stream: 0)
                let data = try FramePayload.ping(frame)
                #expect(data == 0x0102_0304_0506_0708)
            }
        ),
        VectorSpec(
            number: 15,
            kind: "PING",
            encode: { $0.writePing(0x0102_0304_0506_0708, ack: true) },
            check: { frame in
                expectHeader(frame, .ping, .ack, stream: 0)
                let data = try FramePayload.ping(frame)
                #expect(data == 0x0102_0304_0506_0708)
            }
        ),
        VectorSpec(
            number: 16,
            kind: "GOAWAY",
            encode: { $0.writeGoAway(lastStreamID: 7, status: .internal, debug: "bad frame") },
            check: { frame in
                expectHeader(frame, .goAway, [], stream: 0)
                let (last, status, debug) = try FramePayload.goAway(frame)
                #expect(last == 7)
                #expect(status == .internal)
                #expect(debug == "bad frame")
            }
        ),
        VectorSpec(
            number: 17,
            kind: "HALF_CLOSE",
            encode: { $0.writeHalfClose(streamID: 5) },
            check: { frame in
                expectHeader(frame, .halfClose, [], stream: 5)
                try FramePayload.halfClose(frame)
            }
        ),
        VectorSpec(
            number: 18,
            kind: "MESSAGE",
            encode: {
                $0.writeMessageFrame(streamID: 7, flags: .more, bytes: ByteBuffer(bytes: [0x0a, 0x05, 0x68, 0x65]))
            },
            check: { frame in
                expectHeader(frame, .message, .more, stream: 7)
                #expect(Array(frame.payload.readableBytesView) == [0x0a, 0x05, 0x68, 0x65])
            }
        ),
        VectorSpec(
            number: 19,
            kind: "MESSAGE",
            encode: { $0.writeMessageFrame(streamID: 7, flags: .endStream, bytes: ByteBuffer(string: "llo")) },
            check: { frame in
                expectHeader(frame, .message, .endStream, stream: 7)
                #expect(String(buffer: frame.payload) == "llo")
            }
        ),
        VectorSpec(
            number: 20,
            kind: "HEADERS",
            encode: { buffer in
                var metadata = Metadata()
                metadata.add("x-skiff-echo-initial", "hi")
                metadata.add("trace-bin", binary: [0x00, 0x01, 0xfe, 0xff])
                buffer.writeHeaders(streamID: 1, metadata: metadata)
            },
            check: { frame in
                expectHeader(frame, .headers, [], stream: 1)
                let (path, decoded) = try FramePayload.headers(frame)
                #expect(path == "")
                #expect(entries(decoded.metadata) == ["x-skiff-echo-initial=hi", "trace-bin=bin[00 01 fe ff]"])
                #expect(decoded.metadata.last?.value == .binary([0x00, 0x01, 0xfe, 0xff]))
                #expect(decoded.encodedSize == 49)
                #expect(decoded.encodedSize == decoded.metadata.encodedSize)
                #expect(decoded.invalidEntry == nil)
            }
        ),
        VectorSpec(
            number: 21,
            kind: "GOAWAY",
            encode: { $0.writeGoAway(lastStreamID: 0x7fff_ffff, status: .ok) },
            check: { frame in
                expectHeader(frame, .goAway, [], stream: 0)
                let (last, status, debug) = try FramePayload.goAway(frame)
                #expect(last == UInt32(Int32.max))
                #expect(status == .ok)
                #expect(debug == "")
            }
        ),
        VectorSpec(
            number: 22,
            kind: "RST_STREAM",
            encode: { $0.writeRSTStream(streamID: 9, status: .resourceExhausted, reason: "too big") },
            check: { frame in
                expectHeader(frame, .rstStream, [], stream: 9)
                let (status, reason) = try FramePayload.rstStream(frame)
                #expect(status == .resourceExhausted)
                #expect(reason == "too big")
            }
        ),
    ]
}

private func expectHeader(
    _ frame: Frame,
    _ type: FrameType,
    _ flags: FrameFlags,
    stream: UInt32,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(frame.type == type, sourceLocation: sourceLocation)
    #expect(frame.flags == flags, sourceLocation: sourceLocation)
    #expect(frame.streamID == stream, sourceLocation: sourceLocation)
}
