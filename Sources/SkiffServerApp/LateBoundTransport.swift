import SkiffCore
import SwiftProtobuf
import Synchronization

/// A transport whose destination is set once, after construction: it breaks the construction
/// cycles of services that call each other (Bids calls Listings and Chat, Listings calls Bids and
/// Chat, Chat calls Accounts and Listings). Each service gets typed clients over it; the
/// composition root binds it, once the local services exist, to the transport that routes each call
/// to them or to the upstream of a service run elsewhere (``ServiceRoutingTransport``).
///
/// A call made before ``bind(_:)`` fails with UNAVAILABLE.
final class LateBoundTransport: ForwardingClientTransport {
    private let target = Mutex<(any ClientTransport)?>(nil)

    init() {}

    /// Sets the destination. Call once, before serving.
    func bind(_ transport: any ClientTransport) {
        target.withLock { $0 = transport }
    }

    func destination(for method: MethodDescriptor) throws -> any ClientTransport {
        guard let transport = target.withLock({ $0 }) else {
            throw RPCError(code: .unavailable, message: "The in-process services are not wired yet.")
        }
        return transport
    }
}
