import Logging
import NIOCore
import NIOTLS

/// Picks a connection's protocol on a listener that serves several: from the TLS ALPN name when the
/// client offered one the server serves, otherwise from its first bytes. Holds what arrives until
/// one protocol recognizes it, then installs that protocol's handlers in its own place and passes
/// the held bytes on.
///
/// Bounded: at most ``maximumPrefix`` bytes are held, and a connection that has not been recognized
/// within the preface timeout is closed. Bytes no protocol recognizes close the connection without
/// an answer (no protocol would understand one).
final class ProtocolDetector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The most bytes held while deciding (the HTTP/2 client preface is 24).
    static let maximumPrefix = 64

    private let protocols: [any ConnectionProtocol]
    private let connection: ConnectionContext
    private let choose: (any ConnectionProtocol, any Channel) throws -> Void
    private var held: ByteBuffer?
    private var timer: Scheduled<Void>?
    private var decided = false

    /// - Parameter choose: installs the chosen protocol on the channel (the server's bookkeeping
    ///   and the protocol's `configure`).
    init(
        protocols: [any ConnectionProtocol],
        context: ConnectionContext,
        choose: @escaping (any ConnectionProtocol, any Channel) throws -> Void
    ) {
        self.protocols = protocols
        self.connection = context
        self.choose = choose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        let logger = connection.logger
        timer = context.eventLoop.assumeIsolated().scheduleTask(
            in: .nanoseconds(connection.configuration.prefaceTimeout.nanoseconds)
        ) {
            logger.debug("no protocol recognized before the preface timeout")
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if held == nil {
            held = bytes
        } else {
            held!.writeBuffer(&bytes)
        }
        decide(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Under TLS the name the client and server agreed on (ALPN) decides, before any byte.
        if !decided, let tls = event as? TLSUserEvent, case .handshakeCompleted(let name?) = tls,
            let chosen = protocols.first(where: { $0.name == name })
        {
            context.fireUserInboundEventTriggered(event)
            return install(chosen, context: context)
        }
        if event is ChannelShouldQuiesceEvent, !decided {
            // Nothing has started on this connection: draining it is closing it.
            decided = true
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func decide(context: ChannelHandlerContext) {
        guard let prefix = held else { return }
        var undecided = false
        for candidate in protocols {
            switch candidate.recognize(prefix.readableBytesView) {
            case .match: return install(candidate, context: context)
            case .needMoreBytes: undecided = true
            case .noMatch: continue
            }
        }
        if !undecided || prefix.readableBytes >= Self.maximumPrefix {
            decided = true
            connection.logger.debug(
                "connection closed: no protocol recognizes its first bytes",
                metadata: ["bytes": "\(prefix.readableBytes)"]
            )
            context.close(promise: nil)
        }
    }

    private func install(_ chosen: any ConnectionProtocol, context: ChannelHandlerContext) {
        decided = true
        timer?.cancel()
        timer = nil
        do {
            try choose(chosen, context.channel)
        } catch {
            connection.logger.error(
                "could not set up a connection",
                metadata: ["protocol": "\(chosen.name)", "error": "\(error)"]
            )
            context.close(promise: nil)
            return
        }
        // The protocol's handlers sit after this one: pass the held bytes on, then step aside
        // (reads that arrive before the removal completes pass straight through).
        if let bytes = held {
            held = nil
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension ProtocolDetector: Sendable {}
