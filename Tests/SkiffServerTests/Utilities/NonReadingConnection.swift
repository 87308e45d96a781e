import NIOCore
import NIOPosix
import SkiffCore
import SkiffWire

/// A client that writes frames and never reads: the attacker of the slow-reader tests. Its
/// receive buffer is small and it never reads from the socket, so whatever the server sends
/// beyond a few KiB stays with the server.
struct NonReadingConnection {
    let channel: any Channel

    func send(_ build: (inout ByteBuffer) -> Void) async throws {
        var buffer = ByteBuffer()
        build(&buffer)
        try await channel.writeAndFlush(buffer)
    }
}

/// Opens a never-reading connection, sends the preface and `settings`, runs `body`, then closes.
func withNonReadingConnection<R: Sendable>(
    port: Int,
    settings: [(SettingsID, UInt32)] = [],
    _ body: (NonReadingConnection) async throws -> R
) async throws -> R {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelOption(.autoRead, value: false)
        .channelOption(.socketOption(.so_rcvbuf), value: 16 * 1024)
        .connect(host: "127.0.0.1", port: port)
        .get()
    let connection = NonReadingConnection(channel: channel)
    do {
        try await connection.send {
            $0.writePreface()
            $0.writeSettings(settings)
            $0.writeSettingsAck()
        }
        let result = try await body(connection)
        try? await channel.close()
        return result
    } catch {
        try? await channel.close()
        throw error
    }
}

/// The largest windows a client may announce (2^31−1), as the attacker of issue 9 did.
let hugeWindows: [(SettingsID, UInt32)] = [
    (.initialStreamWindow, 0x7FFF_FFFF), (.initialConnectionWindow, 0x7FFF_FFFF),
]
