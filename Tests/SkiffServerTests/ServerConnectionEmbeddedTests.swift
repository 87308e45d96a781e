import NIOCore
import NIOEmbedded
import SkiffCore
import SkiffWire
import Testing

@testable import SkiffServer

private let unaryCall = "/skiff.testing.v1.TestService/UnaryCall"

/// The server connection's timers and limits on an `EmbeddedChannel` with virtual time: each
/// timeout is checked a moment before and at its due time, without waiting on a wall clock.
@Suite("skiff/1 server connection, on virtual time")
struct ServerConnectionEmbeddedTests {
    @Test("a client that never sends its preface is closed at the preface timeout, not before")
    func prefaceTimeout() throws {
        let connection = try EmbeddedServerConnection { $0.prefaceTimeout = .seconds(10) }
        #expect(try connection.frames().map(\.type) == [.settings])
        connection.advance(by: .milliseconds(9_999))
        #expect(connection.isOpen)
        connection.advance(by: .milliseconds(1))
        #expect(!connection.isOpen)
        #expect(try connection.frames().isEmpty)
    }

    @Test("the client's SETTINGS stop the preface timer")
    func prefaceTimerStops() throws {
        let connection = try EmbeddedServerConnection {
            $0.prefaceTimeout = .seconds(10)
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        connection.advance(by: .seconds(60))
        #expect(connection.isOpen)
    }

    @Test("a frame that trickles in slower than the frame timeout gets GOAWAY(RESOURCE_EXHAUSTED)")
    func slowloris() throws {
        let connection = try EmbeddedServerConnection { $0.frameTimeout = .seconds(5) }
        try connection.handshake()
        try connection.send { $0.writeFrameHeader(length: 100, type: .message, streamID: 1) }
        connection.advance(by: .seconds(3))
        try connection.send { $0.writeBytes([1, 2, 3]) }  // more bytes do not restart the clock
        connection.advance(by: .milliseconds(1_999))
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .milliseconds(1))
        let frames = try connection.frames()
        #expect(frames.last?.goAway?.status == .resourceExhausted)
        #expect(!connection.isOpen)
    }

    @Test("an idle connection drains at the idle timeout: GOAWAY(2^31−1), PING, on its ACK the final GOAWAY")
    func idleDrain() throws {
        let connection = try EmbeddedServerConnection { $0.idleTimeout = .seconds(30) }
        try connection.handshake()
        connection.advance(by: .milliseconds(29_999))
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .milliseconds(1))
        let frames = try connection.frames()
        #expect(frames.map(\.type) == [.goAway, .ping])
        #expect(frames.first?.goAway?.lastStreamID == 0x7FFF_FFFF)
        let ping = try FramePayload.ping(frames[1])
        try connection.send { $0.writePing(ping, ack: true) }
        let final = try connection.frames()
        #expect(final.map(\.type) == [.goAway])
        #expect(final.first?.goAway?.lastStreamID == 0)
        #expect(final.first?.goAway?.status == .ok)
        #expect(!connection.isOpen)
    }

    @Test("a client that never ACKs the drain PING gets the final GOAWAY at the end of the grace period")
    func drainGrace() throws {
        let connection = try EmbeddedServerConnection {
            $0.idleTimeout = .seconds(30)
            $0.drainGracePeriod = .seconds(5)
        }
        try connection.handshake()
        connection.advance(by: .seconds(30))
        #expect(try connection.frames().map(\.type) == [.goAway, .ping])
        connection.advance(by: .milliseconds(4_999))
        #expect(connection.isOpen)
        connection.advance(by: .milliseconds(1))
        let final = try connection.frames()
        #expect(final.map(\.type) == [.goAway])
        #expect(final.first?.goAway?.lastStreamID == 0)
        #expect(!connection.isOpen)
    }

    @Test("a drain refuses streams above the final GOAWAY's last stream id with RST_STREAM(REFUSED)")
    func drainRefuses() throws {
        let connection = try EmbeddedServerConnection {
            $0.idleTimeout = .seconds(3_600)
            $0.requestTimeout = .seconds(3_600)
        }
        try connection.handshake()
        // A unary call that waits for its request: its handler has not started.
        try connection.send { $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:]) }
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        let first = try connection.frames()
        #expect(first.map(\.type) == [.goAway, .ping])
        try connection.send {
            $0.writeHeaders(streamID: 3, path: unaryCall, metadata: [:])  // before the client saw the GOAWAY
            $0.writePing(ConnectionDrain.pingData, ack: true)
            $0.writeHeaders(streamID: 5, path: unaryCall, metadata: [:])
        }
        let frames = try connection.frames()
        #expect(frames.map(\.type) == [.goAway, .rstStream])
        #expect(frames.first?.goAway?.lastStreamID == 3)
        #expect(frames.last?.streamID == 5)
        #expect(frames.last?.rst?.status == .unavailable)
        #expect(frames.last?.flags.contains(.refused) == true)
        #expect(connection.isOpen)  // streams 1 and 3 are still open
    }

    @Test("streams that only wait for their request do not keep a connection: it drains, then resets them")
    func waitingStreamsAreIdle() throws {
        let connection = try EmbeddedServerConnection {
            $0.idleTimeout = .seconds(30)
            $0.requestTimeout = .seconds(3_600)
            $0.drainGracePeriod = .seconds(5)
        }
        try connection.handshake()
        try connection.send {
            for i in 0..<10 { $0.writeHeaders(streamID: UInt32(2 * i + 1), path: unaryCall, metadata: [:]) }
        }
        connection.advance(by: .seconds(30))
        #expect(try connection.frames().map(\.type) == [.goAway, .ping])
        // The client ACKs: the final GOAWAY keeps its ten streams, which may still complete.
        try connection.send { $0.writePing(ConnectionDrain.pingData, ack: true) }
        #expect(try connection.frames().map { $0.goAway?.lastStreamID } == [19])
        connection.advance(by: .seconds(5))
        let frames = try connection.frames()
        #expect(frames.count == 10)
        #expect(frames.allSatisfy { $0.type == .rstStream && $0.rst?.status == .unavailable })
        #expect(!connection.isOpen)
    }

    @Test("a unary request that never completes ends at the request timeout; the connection goes on")
    func requestTimeout() throws {
        let connection = try EmbeddedServerConnection {
            $0.requestTimeout = .seconds(10)
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        try connection.send { $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:]) }
        connection.advance(by: .seconds(4))
        try connection.send { $0.writeHeaders(streamID: 3, path: unaryCall, metadata: [:]) }
        connection.advance(by: .milliseconds(5_999))
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .milliseconds(1))
        var frames = try connection.frames()
        #expect(frames.map(\.streamID) == [1])
        #expect(frames.first?.trailers?.status == .deadlineExceeded)
        #expect(frames.first?.trailers?.message.contains("request timeout of 10 s") == true)
        connection.advance(by: .seconds(4))
        frames = try connection.frames()
        #expect(frames.map(\.streamID) == [3])
        #expect(frames.first?.trailers?.status == .deadlineExceeded)
        #expect(connection.isOpen)
    }

    @Test("PINGs with no stream open: one sooner than the minimum interval is a strike, the second ends it")
    func pingStrikes() throws {
        let connection = try EmbeddedServerConnection {
            $0.settings.keepaliveMinIntervalMS = 10_000
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        try connection.send { $0.writePing(1, ack: false) }
        connection.advance(by: .seconds(10))
        try connection.send { $0.writePing(2, ack: false) }  // exactly the interval: allowed
        connection.advance(by: .milliseconds(9_999))
        try connection.send { $0.writePing(3, ack: false) }  // a strike
        #expect(try connection.frames().map(\.type) == [.ping, .ping, .ping])
        #expect(connection.isOpen)
        connection.advance(by: .milliseconds(9_999))
        try connection.send { $0.writePing(4, ack: false) }
        let frames = try connection.frames()
        // Every PING is ACKed, also the one that ends the connection.
        #expect(frames.map(\.type) == [.ping, .goAway])
        #expect(frames.last?.goAway?.status == .resourceExhausted)
        #expect(frames.last?.goAway?.debug == "too_many_pings")
        #expect(!connection.isOpen)
    }

    @Test("while the socket is full the frame and request timers stand still; they resume where they stopped")
    func timersPauseWhileTheSocketIsFull() throws {
        let connection = try EmbeddedServerConnection {
            $0.requestTimeout = .seconds(10)
            $0.frameTimeout = .seconds(10)
            $0.idleTimeout = .seconds(3_600)
            $0.sendStallTimeout = .seconds(3_600)
        }
        try connection.handshake()
        try connection.send { $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:]) }
        connection.advance(by: .seconds(1))
        try connection.send { $0.writeFrameHeader(length: 100, type: .message, streamID: 3) }
        connection.advance(by: .seconds(3))
        connection.setSocketFull(true)
        connection.advance(by: .seconds(600))
        #expect(try connection.frames().isEmpty)
        #expect(connection.isOpen)
        connection.setSocketFull(false)
        // 4 s before the pause and 5.999 s after: the request is not yet 10 s old.
        connection.advance(by: .milliseconds(5_999))
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .milliseconds(1))
        let trailers = try connection.frames()
        #expect(trailers.map(\.streamID) == [1])
        #expect(trailers.first?.trailers?.status == .deadlineExceeded)
        // The partial frame began a second after the HEADERS: it is due a second later.
        connection.advance(by: .milliseconds(999))
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .milliseconds(1))
        let frames = try connection.frames()
        #expect(frames.map(\.type) == [.goAway])
        #expect(frames.first?.goAway?.status == .resourceExhausted)
        #expect(!connection.isOpen)
    }

    @Test("a client that reads nothing for the send-stall timeout is disconnected, then not before")
    func sendStall() throws {
        let connection = try EmbeddedServerConnection {
            $0.sendStallTimeout = .seconds(20)
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        connection.setSocketFull(true)
        connection.advance(by: .seconds(15))
        connection.setSocketFull(false)  // it read a little: the clock starts again
        connection.setSocketFull(true)
        connection.advance(by: .milliseconds(19_999))
        #expect(connection.isOpen)
        connection.advance(by: .milliseconds(1))
        #expect(!connection.isOpen)
    }

    @Test("rapid reset: a burst of MAX_CONCURRENT_STREAMS + a second's worth, then GOAWAY(too_many_resets)")
    func rapidReset() throws {
        let connection = try EmbeddedServerConnection {
            $0.settings.maxConcurrentStreams = 100
            $0.maxResetsPerSecond = 1
            $0.requestTimeout = .seconds(3_600)
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        func openAndReset(_ id: UInt32) throws {
            try connection.send {
                $0.writeHeaders(streamID: id, path: unaryCall, metadata: [:])
                $0.writeRSTStream(streamID: id, status: .cancelled)
            }
        }
        for i in 0..<101 { try openAndReset(UInt32(2 * i + 1)) }  // the burst: 100 + 1
        #expect(try connection.frames().isEmpty)
        connection.advance(by: .seconds(1))  // one more token
        try openAndReset(203)
        #expect(try connection.frames().isEmpty)
        try openAndReset(205)
        let frames = try connection.frames()
        #expect(frames.map(\.type) == [.goAway])
        #expect(frames.first?.goAway?.status == .resourceExhausted)
        #expect(frames.first?.goAway?.debug == "too_many_resets")
        #expect(!connection.isOpen)
    }

    @Test("resets of streams open 50 ms or more, or already ended, cost nothing")
    func resetsOfOlderOrEndedStreamsAreFree() throws {
        let connection = try EmbeddedServerConnection {
            $0.settings.maxConcurrentStreams = 100
            $0.maxResetsPerSecond = 10
            $0.requestTimeout = .seconds(3_600)
            $0.idleTimeout = .seconds(3_600)
        }
        try connection.handshake()
        // 1,000 unary calls whose request never came, each cancelled once 50 ms old: ten bursts' worth.
        for round in 0..<10 {
            let ids = (0..<100).map { UInt32(2 * (round * 100 + $0) + 1) }
            try connection.send { buffer in
                for id in ids { buffer.writeHeaders(streamID: id, path: unaryCall, metadata: [:]) }
            }
            connection.advance(by: .milliseconds(50))
            try connection.send { buffer in
                for id in ids { buffer.writeRSTStream(streamID: id, status: .cancelled) }
            }
        }
        // Resets of streams that have ended already are free too.
        try connection.send { buffer in
            for id in stride(from: UInt32(1), to: 2_001, by: 2) {
                buffer.writeRSTStream(streamID: id, status: .cancelled)
            }
        }
        #expect(try connection.frames().isEmpty)
        #expect(connection.isOpen)
        // Streams 49 ms old are not: the same thousand now ends the connection.
        var goAway: Frame?
        for round in 0..<10 where goAway == nil {
            let ids = (0..<100).map { UInt32(2_001 + 2 * (round * 100 + $0)) }
            try connection.send { buffer in
                for id in ids { buffer.writeHeaders(streamID: id, path: unaryCall, metadata: [:]) }
            }
            connection.advance(by: .milliseconds(49))
            try connection.send { buffer in
                for id in ids { buffer.writeRSTStream(streamID: id, status: .cancelled) }
            }
            goAway = try connection.frames().first { $0.type == .goAway }
        }
        #expect(goAway?.goAway?.debug == "too_many_resets")
    }

    @Test("a stream window the client overruns is a connection error: GOAWAY(INTERNAL)")
    func windowOverrun() throws {
        let connection = try EmbeddedServerConnection {
            $0.settings.initialStreamWindow = 1_000
            $0.requestTimeout = .seconds(3_600)
        }
        try connection.handshake()
        try connection.send { $0.writeHeaders(streamID: 1, path: unaryCall, metadata: [:]) }
        try connection.send {
            $0.writeMessage(streamID: 1, bytes: Array(repeating: 0, count: 1_001), flags: [])
        }
        let frames = try connection.frames()
        #expect(frames.last?.goAway?.status == .internal, "\(frames)")
        #expect(frames.last?.goAway?.debug.contains("window overrun") == true)
    }
}
