import NIOCore
import SkiffCore
import SkiffWire
import Testing

@Suite("Metadata validation helpers")
struct MetadataTests {
    @Test(
        "valid keys",
        arguments: [
            "a", "x-request-id", "authorization", "grpc-timeout", "a_b.c-d", "0123456789", "trace-bin", "-bin", ".",
        ]
    )
    func validKey(key: String) {
        #expect(Metadata.isValidKey(key.utf8))
    }

    @Test(
        "invalid keys",
        arguments: [
            "", "X-Request-Id", "A", "x id", ":authority", "x/y", "x+y", "clé", "x\u{0}", "x\n", "x~", "Trace-Bin",
        ]
    )
    func invalidKey(key: String) {
        #expect(!Metadata.isValidKey(key.utf8))
    }

    @Test("binary keys end in -bin, case-sensitively")
    func binaryKeys() {
        for key in ["trace-bin", "grpc-status-details-bin", "x-skiff-echo-trailing-bin", "-bin"] {
            #expect(Metadata.isBinaryKey(key.utf8), "\(key)")
        }
        for key in ["bin", "trace_bin", "x-BIN", "x-bin2", "bin-x", "x-bi", ""] {
            #expect(!Metadata.isBinaryKey(key.utf8), "\(key)")
        }
    }

    @Test("text values are printable ASCII, 0x20 … 0x7E")
    func textValues() {
        #expect(Metadata.isValidTextValue("".utf8))
        #expect(Metadata.isValidTextValue(" ~".utf8))
        #expect(Metadata.isValidTextValue("Bearer abc.DEF-123_/+=".utf8))
        #expect(Metadata.isValidTextValue((0x20...0x7e).map { UInt8($0) }))
        for byte: UInt8 in [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x80, 0xc3, 0xff] {
            #expect(!Metadata.isValidTextValue([0x61, byte]), "byte 0x\(String(byte, radix: 16))")
        }
        #expect(!Metadata.isValidTextValue("café".utf8))
    }

    @Test("validationFailure names the first bad entry")
    func validationFailure() throws {
        var good = Metadata()
        good.add("authorization", "Bearer t")
        good.add("trace-bin", binary: [0, 0xff, 0x0a])
        #expect(good.validationFailure() == nil)

        var badKey = good
        badKey.add("X-Upper", "v")
        badKey.add("also bad", "v")
        let keyFailure = try #require(badKey.validationFailure())
        #expect(keyFailure.contains("X-Upper"))

        var badValue = good
        badValue.add("x-id", "line\nbreak")
        let valueFailure = try #require(badValue.validationFailure())
        #expect(valueFailure.contains("x-id"))
    }

    /// A `.binary` value under a key without `-bin` is written raw, so non-printable bytes reach the
    /// wire where the contract allows only printable ASCII; the receiver (FramePayload) then flags the
    /// entry and the stream fails with INTERNAL. validationFailure() should catch it before sending.
    @Test("validationFailure rejects non-printable bytes under a text key, whatever the Value case")
    func validationFailureBinaryUnderTextKey() throws {
        var metadata = Metadata()
        metadata.add("x-id", binary: [0x00, 0xff])
        var wire = ByteBuffer()
        wire.writeHeaders(streamID: 1, metadata: metadata)
        let frame = try #require(try decodeFrames(Array(wire.readableBytesView)).first)
        #expect(try FramePayload.headers(frame).metadata.invalidEntry != nil, "the receiver rejects it")
        #expect(metadata.validationFailure() != nil, "so the sender's check should too")
    }

    /// The wire, the contract and FramePayload decide "binary or text" by the key's `-bin` suffix;
    /// validationFailure() decides by the Value case, so it refuses a `.string` under a `-bin` key
    /// ("use a -bin key for binary values") although a peer accepts those bytes.
    @Test("validationFailure accepts any bytes under a -bin key, whatever the Value case")
    func validationFailureStringUnderBinKey() throws {
        var metadata = Metadata()
        metadata.add("weird-bin", "\u{1}\u{2}")
        var wire = ByteBuffer()
        wire.writeHeaders(streamID: 1, metadata: metadata)
        let frame = try #require(try decodeFrames(Array(wire.readableBytesView)).first)
        #expect(try FramePayload.headers(frame).metadata.invalidEntry == nil, "the receiver accepts it")
        #expect(metadata.validationFailure() == nil, "so the sender's check should too")
    }

    @Test("printable bytes under a text key are fine in either Value case")
    func printableBinaryUnderTextKey() {
        var metadata = Metadata()
        metadata.add("x-id", binary: Array("abc".utf8))
        #expect(metadata.validationFailure() == nil)
    }

    @Test("order, duplicates, first(), values(), replace() and removeAll()")
    func collectionBehaviour() {
        var metadata: Metadata = ["b": "1", "a": "2", "b": "3"]
        #expect(entries(metadata) == ["b=1", "a=2", "b=3"])
        #expect(metadata.first("b") == "1")
        #expect(metadata.first("missing") == nil)
        #expect(metadata.values("b") == ["1", "3"])
        metadata.add("c-bin", binary: Array("xy".utf8))
        #expect(metadata.first("c-bin") == "xy")
        metadata.replace("b", "9")
        #expect(entries(metadata) == ["a=2", "c-bin=bin[78 79]", "b=9"])
        metadata.removeAll(key: "a")
        #expect(entries(metadata) == ["c-bin=bin[78 79]", "b=9"])
        #expect(Metadata.Value.binary([1, 2]).bytes == [1, 2])
        #expect(Metadata.Value.string("hi").bytes == [0x68, 0x69])
    }

    @Test("Metadata.encodedSize counts the u16 count and 6 bytes of lengths per entry")
    func encodedSize() {
        #expect(Metadata().encodedSize == 2)
        #expect((["x-request-id": "abc"] as Metadata).encodedSize == 23)
        var metadata = Metadata()
        metadata.add("k", "")
        metadata.add("k-bin", binary: [1, 2, 3])
        metadata.add("é", "ü")  // multi-byte characters count as UTF-8 bytes
        #expect(metadata.encodedSize == 2 + (6 + 1) + (6 + 5 + 3) + (6 + 2 + 2))
    }
}
