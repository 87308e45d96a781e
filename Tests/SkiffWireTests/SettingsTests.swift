import NIOCore
import SkiffCore
import SkiffWire
import Testing

@Suite("SETTINGS ranges and encoding")
struct SettingsTests {
    static let mib: UInt32 = 1024 * 1024
    static let max31 = UInt32(Int32.max)

    private func accepts(
        _ pairs: [(UInt16, UInt32)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> ConnectionSettings? {
        do {
            return try ConnectionSettings.decode(pairs)
        } catch {
            Issue.record("rejected \(pairs): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    private func rejects(_ pairs: [(UInt16, UInt32)], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: ProtocolViolation.self, "\(pairs)", sourceLocation: sourceLocation) {
            try ConnectionSettings.decode(pairs)
        }
    }

    @Test("defaults of the contract")
    func defaults() throws {
        let d = ConnectionSettings.protocolDefaults
        #expect(d.maxFrameSize == 65_536)
        #expect(d.initialStreamWindow == 8 * Self.mib)
        #expect(d.initialConnectionWindow == 16 * Self.mib)
        #expect(d.maxConcurrentStreams == nil)
        #expect(d.maxHeaderListSize == 8_192)
        #expect(d.maxMessageSize == 4 * Self.mib)
        #expect(d.keepaliveMinIntervalMS == 300_000)
        #expect(try ConnectionSettings.decode([]) == d)
        #expect(d.encodedPairs.isEmpty)
        try d.validate()
    }

    @Test("MAX_FRAME_SIZE: 16383 rejected, 16384 ok, 16 MiB ok, 16 MiB + 1 rejected")
    func maxFrameSize() {
        rejects([(0x1, 16_383)])
        rejects([(0x1, 0)])
        #expect(accepts([(0x1, 16_384)])?.maxFrameSize == 16_384)
        #expect(accepts([(0x1, 16 * Self.mib)])?.maxFrameSize == 16 * Self.mib)
        rejects([(0x1, 16 * Self.mib + 1)])
        rejects([(0x1, .max)])
    }

    @Test("INITIAL_STREAM_WINDOW: never below the sender's MAX_MESSAGE_SIZE, at most 2^31-1")
    func initialStreamWindow() {
        rejects([(0x2, 4 * Self.mib - 1)])  // below the default MAX_MESSAGE_SIZE
        rejects([(0x2, 0)])
        #expect(accepts([(0x2, 4 * Self.mib)])?.initialStreamWindow == 4 * Self.mib)
        #expect(accepts([(0x2, 1_024), (0x6, 1_024)])?.initialStreamWindow == 1_024)
        #expect(accepts([(0x6, 1_024), (0x2, 1_024)])?.initialStreamWindow == 1_024, "order does not matter")
        rejects([(0x6, 2_048), (0x2, 2_047)])
        rejects([(0x6, 16 * Self.mib)])  // the defaulted 8 MiB window is then below the message size
        #expect(accepts([(0x2, Self.max31)])?.initialStreamWindow == Self.max31)
        rejects([(0x2, Self.max31 + 1)])
        rejects([(0x2, .max)])
    }

    @Test("INITIAL_CONNECTION_WINDOW: 0 rejected, 1 … 2^31-1 ok")
    func initialConnectionWindow() {
        rejects([(0x3, 0)])
        #expect(accepts([(0x3, 1)])?.initialConnectionWindow == 1)
        #expect(accepts([(0x3, Self.max31)])?.initialConnectionWindow == Self.max31)
        rejects([(0x3, Self.max31 + 1)])
    }

    @Test("MAX_CONCURRENT_STREAMS: any value, 0 included")
    func maxConcurrentStreams() {
        #expect(accepts([(0x4, 0)])?.maxConcurrentStreams == 0)
        #expect(accepts([(0x4, 1_000)])?.maxConcurrentStreams == 1_000)
        #expect(accepts([(0x4, .max)])?.maxConcurrentStreams == .max)
    }

    @Test("MAX_HEADER_LIST_SIZE: 1023 rejected, 1024 ok, at most MAX_FRAME_SIZE - 6")
    func maxHeaderListSize() {
        rejects([(0x5, 1_023)])
        rejects([(0x5, 0)])
        #expect(accepts([(0x5, 1_024)])?.maxHeaderListSize == 1_024)
        #expect(accepts([(0x5, 65_530)])?.maxHeaderListSize == 65_530)
        rejects([(0x5, 65_531)])  // default MAX_FRAME_SIZE 65,536 − 6
        #expect(accepts([(0x1, 16_384), (0x5, 16_378)])?.maxHeaderListSize == 16_378)
        rejects([(0x1, 16_384), (0x5, 16_379)])
        rejects([(0x5, 16_379), (0x1, 16_384)])
        rejects([(0x5, 9_000), (0x1, 16_384), (0x5, 20_000)])
        #expect(accepts([(0x1, 16 * Self.mib), (0x5, 16 * Self.mib - 6)])?.maxHeaderListSize == 16 * Self.mib - 6)
    }

    @Test("MAX_MESSAGE_SIZE: 1023 rejected, 1024 ok, at most 2^31-1")
    func maxMessageSize() {
        rejects([(0x6, 1_023)])
        rejects([(0x6, 0)])
        #expect(accepts([(0x6, 1_024)])?.maxMessageSize == 1_024)
        #expect(accepts([(0x6, Self.max31), (0x2, Self.max31)])?.maxMessageSize == Self.max31)
        rejects([(0x6, Self.max31 + 1), (0x2, Self.max31)])
    }

    @Test("KEEPALIVE_MIN_INTERVAL_MS: any value")
    func keepalive() {
        #expect(accepts([(0x7, 0)])?.keepaliveMinIntervalMS == 0)
        #expect(accepts([(0x7, .max)])?.keepaliveMinIntervalMS == .max)
    }

    @Test("unknown ids are ignored, whatever their value", arguments: [UInt16(0), 0x8, 0x9, 0x100, 0xffff])
    func unknownIDsIgnored(id: UInt16) {
        #expect(accepts([(id, 0)]) == .protocolDefaults)
        #expect(accepts([(id, .max), (0x1, 16_384)])?.maxFrameSize == 16_384)
    }

    @Test("a repeated id: the later value counts")
    func repeatedID() {
        #expect(accepts([(0x1, 16_384), (0x1, 32_768)])?.maxFrameSize == 32_768)
    }

    static func custom() -> [ConnectionSettings] {
        var a = ConnectionSettings()
        a.maxConcurrentStreams = 1_000
        var b = ConnectionSettings()
        b.maxFrameSize = 16_384
        b.initialStreamWindow = 1_024
        b.initialConnectionWindow = 1
        b.maxConcurrentStreams = 0
        b.maxHeaderListSize = 16_378
        b.maxMessageSize = 1_024
        b.keepaliveMinIntervalMS = 0
        var c = ConnectionSettings()
        c.maxFrameSize = 16 * mib
        c.initialStreamWindow = max31
        c.initialConnectionWindow = max31
        c.maxHeaderListSize = 16 * mib - 6
        c.maxMessageSize = max31
        c.keepaliveMinIntervalMS = .max
        return [.protocolDefaults, a, b, c]
    }

    @Test("encodedPairs round-trips through a SETTINGS frame", arguments: custom())
    func encodedPairsRoundTrip(settings: ConnectionSettings) throws {
        try settings.validate()
        var buffer = ByteBuffer()
        buffer.writeSettings(settings.encodedPairs)
        let frame = try #require(try decodeFrames(Array(buffer.readableBytesView)).first)
        #expect(frame.type == .settings && frame.streamID == 0 && frame.flags == [])
        #expect(frame.payload.readableBytes == settings.encodedPairs.count * 6)
        let decoded = try ConnectionSettings.decode(FramePayload.settings(frame))
        #expect(decoded == settings)
    }

    @Test("encodedPairs lists only values that differ from the defaults, in id order")
    func encodedPairsContent() {
        var settings = ConnectionSettings()
        settings.maxMessageSize = 2_048
        settings.maxConcurrentStreams = 100
        settings.maxFrameSize = 32_768
        let pairs = settings.encodedPairs
        #expect(pairs.map(\.0.rawValue) == [0x1, 0x4, 0x6])
        #expect(pairs.map(\.1) == [32_768, 100, 2_048])
    }

    @Test("validate() rejects settings a peer would reject")
    func validateRejects() {
        var tooBigMessage = ConnectionSettings()
        tooBigMessage.maxMessageSize = 16 * Self.mib
        #expect(throws: ProtocolViolation.self) { try tooBigMessage.validate() }

        var tinyFrame = ConnectionSettings()
        tinyFrame.maxFrameSize = 1_024
        #expect(throws: ProtocolViolation.self) { try tinyFrame.validate() }

        var headerListOverFrame = ConnectionSettings()
        headerListOverFrame.maxFrameSize = 16_384
        headerListOverFrame.maxHeaderListSize = 16_384
        #expect(throws: ProtocolViolation.self) { try headerListOverFrame.validate() }

        var noConnectionWindow = ConnectionSettings()
        noConnectionWindow.initialConnectionWindow = 0
        #expect(throws: ProtocolViolation.self) { try noConnectionWindow.validate() }
    }

    @Test("SettingsID raw values")
    func ids() {
        #expect(
            [
                SettingsID.maxFrameSize, .initialStreamWindow, .initialConnectionWindow, .maxConcurrentStreams,
                .maxHeaderListSize, .maxMessageSize, .keepaliveMinIntervalMS,
            ].map(\.rawValue) == [1, 2, 3, 4, 5, 6, 7]
        )
    }
}
