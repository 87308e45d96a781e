import NIOCore
import SkiffCore
import SkiffWire
import Testing

/// The connection state machines of skiff/1, without I/O: time is a value the test passes.
@Suite("skiff/1 state machines")
struct ConnectionStateMachineTests {
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    // MARK: Flow windows

    @Test("an inbound window returns credit in quarter-window batches and refuses an overrun")
    func inboundWindow() throws {
        var window = InboundWindow(size: 100)
        #expect(window.batch == 25)
        #expect(try window.received(10) == nil)
        #expect(try window.received(10) == nil)
        #expect(window.available == 80)
        #expect(try window.received(10) == 30)  // 30 owed ≥ 25: all of it goes back
        #expect(window.available == 100)
        #expect(window.owed == 0)
        #expect(try window.received(5) == nil)
        #expect(window.takeOwed() == 5)
        #expect(window.takeOwed() == nil)
        try window.consume(100)
        #expect(throws: ProtocolViolation.self) { try window.consume(1) }
    }

    @Test("a stream window consumed by the transport is restored by what the application read")
    func restore() throws {
        var window = InboundWindow(size: 64)
        try window.consume(64)
        #expect(window.available == 0)
        #expect(window.restore(40) == 40)
        #expect(window.available == 40)
        // Never above 2^31−1, whatever the caller returns.
        var big = InboundWindow(size: Int(Int32.max))
        #expect(big.restore(10) == 0)
    }

    @Test("an outbound window grows with WINDOW_UPDATE and SETTINGS, may go negative, and caps at 2^31−1")
    func outboundWindow() throws {
        var window = OutboundWindow(size: 10)
        window.spend(10)
        #expect(!window.isOpen)
        window.adjust(by: -5)
        #expect(window.available == -5)
        try window.grant(6)
        #expect(window.isOpen)
        #expect(window.available == 1)
        #expect(throws: ProtocolViolation.self) { try window.grant(UInt32(Int32.max)) }
    }

    // MARK: Messages

    static func message(_ bytes: [UInt8], _ flags: FrameFlags = []) -> Frame {
        Frame(type: .message, flags: flags, streamID: 1, payload: ByteBuffer(bytes: bytes))
    }

    @Test("fragments are reassembled; MORE says another follows; a whole frame is a message at once")
    func reassembly() {
        var assembler = MessageAssembler()
        guard case .message(let whole) = assembler.append(Self.message([1, 2]), maxMessageSize: 10) else {
            Issue.record("expected a message")
            return
        }
        #expect(Array(whole.readableBytesView) == [1, 2])
        guard case .incomplete = assembler.append(Self.message([1, 2], .more), maxMessageSize: 10),
            case .incomplete = assembler.append(Self.message([3], .more), maxMessageSize: 10)
        else {
            Issue.record("expected fragments to wait")
            return
        }
        #expect(assembler.isMidMessage)
        #expect(assembler.bufferedBytes == 3)
        guard case .message(let joined) = assembler.append(Self.message([4]), maxMessageSize: 10) else {
            Issue.record("expected the joined message")
            return
        }
        #expect(Array(joined.readableBytesView) == [1, 2, 3, 4])
        #expect(!assembler.isMidMessage)
    }

    @Test("a message over MAX_MESSAGE_SIZE is refused as soon as its fragments say so; COMPRESSED is refused")
    func reassemblyLimits() {
        var assembler = MessageAssembler()
        guard case .tooLarge = assembler.append(Self.message(Array(repeating: 0, count: 11)), maxMessageSize: 10)
        else {
            Issue.record("expected tooLarge")
            return
        }
        _ = assembler.append(Self.message(Array(repeating: 0, count: 6), .more), maxMessageSize: 10)
        guard case .tooLarge = assembler.append(Self.message(Array(repeating: 0, count: 5), .more), maxMessageSize: 10)
        else {
            Issue.record("expected tooLarge on the fragment that crosses the limit")
            return
        }
        #expect(!assembler.isMidMessage)  // what was buffered is dropped
        guard case .compressed = assembler.append(Self.message([1], .compressed), maxMessageSize: 10) else {
            Issue.record("expected compressed")
            return
        }
    }

    // MARK: SETTINGS

    static func settingsFrame(_ pairs: [(SettingsID, UInt32)], ack: Bool = false) -> Frame {
        var payload = ByteBuffer()
        for (id, value) in pairs { payload.writeMultipleIntegers(id.rawValue, value) }
        return Frame(type: .settings, flags: ack ? .ack : [], streamID: 0, payload: payload)
    }

    @Test("the peer's SETTINGS apply on arrival with window deltas; ours only once ACKed; a second is a violation")
    func settingsExchange() throws {
        var local = ConnectionSettings()
        local.maxMessageSize = 1024
        local.maxConcurrentStreams = 8
        var exchange = SettingsExchange(local: local)
        // Below the default: not enforced before the ACK.
        #expect(exchange.enforced(\.maxMessageSize) == ConnectionSettings.protocolDefaults.maxMessageSize)
        #expect(exchange.enforcedStreamLimit == nil)
        let change = try exchange.receive(
            Self.settingsFrame([(.initialStreamWindow, 5 << 20), (.initialConnectionWindow, 32 << 20)])
        )
        #expect(change == .remote(streamWindowDelta: -(3 << 20), connectionWindowDelta: 16 << 20))
        #expect(exchange.receivedRemote)
        #expect(exchange.remote.initialStreamWindow == 5 << 20)
        #expect(throws: ProtocolViolation.self) { try exchange.receive(Self.settingsFrame([])) }
        #expect(try exchange.receive(Self.settingsFrame([], ack: true)) == .localAcked)
        #expect(exchange.enforced(\.maxMessageSize) == 1024)
        #expect(exchange.enforcedStreamLimit == 8)
    }

    // MARK: Keepalive

    @Test("PINGs with no stream open: the second one too soon ends the connection; an open stream forgives")
    func pingStrikes() {
        var policy = KeepalivePolicy(minInterval: .seconds(10), maxPerSecond: 100)
        #expect(policy.pingReceived(at: Self.t0, streamsOpen: false) == .answer)
        #expect(policy.pingReceived(at: Self.t0 + .seconds(1), streamsOpen: false) == .answer)
        #expect(policy.strikes == 1)
        policy.streamOpened()
        #expect(policy.strikes == 0)
        #expect(policy.pingReceived(at: Self.t0 + .seconds(2), streamsOpen: false) == .answer)
        #expect(policy.pingReceived(at: Self.t0 + .seconds(3), streamsOpen: false) == .answerAndClose)
    }

    @Test("PINGs while a stream is open are never punished; PINGs at the allowed interval never are")
    func pingsAllowed() {
        var policy = KeepalivePolicy(minInterval: .seconds(10), maxPerSecond: 100)
        for i in 0..<1_000 {
            #expect(policy.pingReceived(at: Self.t0 + .milliseconds(Int64(i)), streamsOpen: true) == .answer)
        }
        var spaced = KeepalivePolicy(minInterval: .seconds(10), maxPerSecond: 100)
        for i in 0..<10 {
            #expect(spaced.pingReceived(at: Self.t0 + .seconds(Int64(10 * i)), streamsOpen: false) == .answer)
        }
    }

    @Test("with no minimum interval, a flood over the per-second limit still ends the connection")
    func pingFlood() {
        var policy = KeepalivePolicy(minInterval: .zero, maxPerSecond: 5)
        for i in 0..<5 {
            #expect(policy.pingReceived(at: Self.t0 + .milliseconds(Int64(i)), streamsOpen: false) == .answer)
        }
        #expect(policy.pingReceived(at: Self.t0 + .milliseconds(6), streamsOpen: false) == .answerAndClose)
        var paced = KeepalivePolicy(minInterval: .zero, maxPerSecond: 5)
        for i in 0..<50 {
            // Five a second, forever: allowed.
            #expect(paced.pingReceived(at: Self.t0 + .milliseconds(Int64(i) * 201), streamsOpen: false) == .answer)
        }
    }

    // MARK: Rapid reset

    @Test("premature resets spend a burst, then refill at the per-second rate")
    func resetBucket() {
        var limiter = ResetRateLimiter(burst: 3, perSecond: 2, now: Self.t0)
        let burst = (0..<4).map { _ in limiter.prematureReset(at: Self.t0) }
        #expect(burst == [true, true, true, false])
        // Two seconds refill four tokens (the bucket was one below empty): three more.
        let later = (0..<4).map { _ in limiter.prematureReset(at: Self.t0 + .seconds(2)) }
        #expect(later == [true, true, true, false])
        // Two a second, forever: allowed.
        var steady = ResetRateLimiter(burst: 3, perSecond: 2, now: Self.t0)
        let paced = (0..<100).map { steady.prematureReset(at: Self.t0 + .milliseconds(Int64($0) * 500)) }
        #expect(paced.allSatisfy { $0 })
    }

    // MARK: Drain

    @Test("drain: GOAWAY and PING once, the final GOAWAY on the PING's ACK names the highest accepted stream")
    func drain() {
        var drain = ConnectionDrain()
        drain.accepted(1)
        drain.accepted(5)
        #expect(drain.accepts(7))
        #expect(drain.pingAckReceived(ConnectionDrain.pingData) == nil)  // not draining yet
        let began = drain.beginDrain()
        let again = drain.beginDrain()
        #expect(began && !again)
        #expect(drain.isDraining)
        drain.accepted(7)  // opened before the client saw the GOAWAY
        #expect(drain.pingAckReceived(0x1234) == nil)  // someone else's PING
        #expect(drain.pingAckReceived(ConnectionDrain.pingData) == 7)
        #expect(drain.finalLastStreamID == 7)
        #expect(drain.accepts(7))
        #expect(!drain.accepts(9))
        #expect(drain.pingAckReceived(ConnectionDrain.pingData) == nil)
        #expect(drain.graceExpired() == nil)
    }

    @Test("drain: a client that never ACKs gets the final GOAWAY when the grace period ends")
    func drainGrace() {
        var drain = ConnectionDrain()
        drain.accepted(3)
        let began = drain.beginDrain()
        #expect(began)
        #expect(drain.graceExpired() == 3)
        #expect(!drain.accepts(5))
    }

    // MARK: Request timeouts

    @Test("requests are due a timeout after their HEADERS; client streams after their last message")
    func requestTimeouts() {
        var timeouts = RequestTimeouts(timeout: .seconds(10))
        timeouts.start(1, at: Self.t0)
        timeouts.start(3, at: Self.t0 + .seconds(2))
        #expect(timeouts.earliest == Self.t0 + .seconds(10))
        timeouts.progress(1, at: Self.t0 + .seconds(5))
        timeouts.progress(99, at: Self.t0 + .seconds(5))  // not waiting: ignored
        #expect(!timeouts.isWaiting(99))
        #expect(timeouts.expire(at: Self.t0 + .seconds(11)) == [])
        #expect(timeouts.expire(at: Self.t0 + .seconds(12)) == [3])
        #expect(timeouts.earliest == Self.t0 + .seconds(15))
        timeouts.postpone(by: .seconds(100))  // reads were paused that long
        #expect(timeouts.expire(at: Self.t0 + .seconds(20)) == [])
        #expect(timeouts.expire(at: Self.t0 + .seconds(115)) == [1])
        #expect(timeouts.isEmpty)
        timeouts.start(5, at: Self.t0)
        timeouts.stop(5)
        #expect(timeouts.isEmpty)
    }

    // MARK: Streams

    @Test("a client's stream: idle, open with its HEADERS, half-closed by HALF_CLOSE, closed by TRAILERS")
    func clientStream() {
        var stream = StreamState()
        #expect(stream.isIdle && !stream.localOpen && !stream.remoteOpen)
        let r1 = stream.halfClose(.local)
        #expect(!r1)  // nothing to end before the HEADERS
        stream.open()
        #expect(stream.phase == .open && stream.localOpen && stream.remoteOpen)
        let r2 = stream.halfClose(.local)
        #expect(r2)
        #expect(stream.phase == .halfClosedLocal && !stream.localOpen && stream.remoteOpen)
        let r3 = stream.halfClose(.local)
        #expect(!r3)  // a second HALF_CLOSE
        let r4 = stream.close(.notFound)
        #expect(r4)
        #expect(stream.status == .notFound && !stream.remoteOpen)
        let r5 = stream.close(.ok)
        #expect(!r5)  // the first status stands
        #expect(stream.status == .notFound)
        stream.open()  // a closed stream never reopens
        #expect(stream.isClosed)
    }

    @Test("a server's stream: open from its HEADERS, half-closed by the client, closed by its TRAILERS or a reset")
    func serverStream() {
        var stream = StreamState(.open)
        let r6 = stream.halfClose(.remote)
        #expect(r6)
        #expect(stream.phase == .halfClosedRemote && stream.localOpen && !stream.remoteOpen)
        let r7 = stream.halfClose(.remote)
        #expect(!r7)  // HALF_CLOSE twice: the caller reports it
        let r8 = stream.close(.ok)
        #expect(r8)
        #expect(stream.phase == .closed(.ok) && !stream.localOpen)

        var reset = StreamState(.open)
        let r9 = reset.close(.cancelled)
        #expect(r9)  // RST_STREAM before the client's side ended
        let r10 = reset.halfClose(.remote)
        #expect(!r10)  // frames after the reset are not a half-close
        #expect(reset.status == .cancelled)
    }
}
