import Testing

@testable import SkiffClient

/// The client connection's life as a value: no socket, no event loop.
@Suite("Client connection state")
struct ClientConnectionStateTests {
    @Test(
        "calls routed to a connection wait while it connects and until the server's SETTINGS; then they open; once closed they fail"
    )
    func routing() {
        var state = ClientConnectionState()
        #expect(state.routing == .queue && !state.opensStreams)
        let up = state.connected()
        #expect(up && state.isActive)
        #expect(state.routing == .queue && !state.opensStreams)  // no server has shown it took the connection
        let again = state.connected()  // a second channelActive changes nothing
        #expect(!again)
        state.ready()
        #expect(state.routing == .openOrQueue && state.opensStreams)
        let ended = state.shutdown()
        #expect(ended?.wasActive == true && ended?.everReady == true)
        #expect(state.routing == .fail && !state.isActive)
        let twice = state.shutdown()
        #expect(twice == nil)
    }

    @Test("a connection that ends before the server's SETTINGS says so: its queued calls were never sent")
    func endsBeforeSettings() {
        var state = ClientConnectionState()
        _ = state.connected()
        let ended = state.shutdown()
        #expect(ended?.wasActive == true && ended?.everReady == false)
    }

    @Test("a GOAWAY before the server's SETTINGS sends calls elsewhere")
    func goAwayBeforeSettings() {
        var state = ClientConnectionState()
        _ = state.connected()
        _ = state.stopTakingStreams()
        #expect(state.routing == .reroute && !state.opensStreams)
    }

    @Test(
        "after the server's GOAWAY new calls go elsewhere, the pool is told once, and the idle connection closes once"
    )
    func goAway() {
        var state = ClientConnectionState()
        _ = state.connected()
        state.ready()
        let idleButOpen = state.closeIfIdle(idle: true)
        #expect(!idleButOpen)  // still taking streams: an idle connection stays
        let first = state.stopTakingStreams()
        let second = state.stopTakingStreams()
        #expect(first && !second)
        #expect(state.routing == .reroute && !state.opensStreams)
        let busy = state.closeIfIdle(idle: false)
        #expect(!busy)
        let close = state.closeIfIdle(idle: true)
        let closeAgain = state.closeIfIdle(idle: true)
        #expect(close && !closeAgain)
        let ended = state.shutdown()
        #expect(ended?.everReady == true)
    }

    @Test("a graceful close: at once while connecting with nothing queued, else when the last call ends")
    func gracefulClose() {
        var connecting = ClientConnectionState()
        let now = connecting.beginGracefulClose(nothingQueued: true)
        #expect(now)

        var waiting = ClientConnectionState()
        let notYet = waiting.beginGracefulClose(nothingQueued: false)
        #expect(!notYet)
        _ = waiting.connected()
        #expect(waiting.routing == .queue)  // until the server's SETTINGS
        waiting.ready()
        #expect(waiting.routing == .openOrQueue)  // the queued call still opens here
        let idle = waiting.closeIfIdle(idle: true)
        #expect(idle)
        #expect(waiting.routing == .reroute)  // the close is on its way
    }
}
