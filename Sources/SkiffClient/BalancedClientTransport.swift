public import NIOCore
public import NIOPosix
public import SkiffCore
import SkiffStandardServices
public import SwiftProtobuf
import Synchronization

/// Several addresses of one service, used round-robin: calls go to the addresses that are
/// healthy, and a call that no server processed moves to another address. Apps and services need
/// no separate load balancer to use two or more servers.
///
/// Each address has its own ``ClientConnection``. All of them run on one event loop of the group
/// (that is what lets a call move from one address to another without losing its place in its
/// request), so the transport's I/O uses one thread, as one ``ClientConnection``'s does.
///
/// **Health.** Every ``Configuration/healthCheckInterval`` a background task asks each address
/// `skiff.health.v1.Health/Check` for ``Configuration/healthCheckService``: SERVING makes the
/// address healthy; NOT_SERVING, any other status, an error (a server without the health service
/// included) or no answer within ``Configuration/healthCheckTimeout`` makes it unhealthy. Between
/// checks an address also turns unhealthy at once when a connection attempt to it fails, when its
/// connection drops, when its server sends GOAWAY (it is shutting down, or closing the connection
/// for another reason), or when a call fails over from it; only a health check that says SERVING
/// (and started after that) brings it back. Calls go round-robin over the healthy addresses; when
/// none is, over all of them, so a transport that has just been created works before its first
/// health check (every address starts healthy).
///
/// **Failover.** A call that fails with UNAVAILABLE *without having been processed by a server* is
/// retried on another address, up to ``Configuration/maxFailovers`` times and never twice on the
/// same address, healthy addresses first. That covers: the address could not be reached (refused,
/// timed out, TLS failed), the connection closed before the call's stream was sent, the server
/// refused the stream or it was above a GOAWAY's last stream id once the connection's own
/// transparent retries (``ClientConfiguration/maxTransparentRetries``) are spent, and a draining
/// or shutting-down server that turned the call away. A call that may have been processed — its
/// stream was sent to a server, which did not say it refused it — is never retried: its error is
/// returned as is, whatever its code.
///
/// A streaming call fails over under the same rule, and only while it still can be replayed:
/// before the server has accepted its stream (before the response head), and while the request
/// messages written so far fit in ``ClientConfiguration/retryBufferLimit`` (the same rule as the
/// connection's transparent retries). The request producer is not run again; what it wrote goes
/// to the next address, and what it writes from then on follows.
///
/// Call ``close()`` when done: calls in flight finish, health checks stop, then the connections
/// close.
///
/// ```swift
/// let transport = BalancedClientTransport(targets: [
///     .host("10.0.0.1", port: 7700), .host("10.0.0.2", port: 7700),
/// ])
/// let accounts = Skiff_Accounts_V1_Accounts.Client(transport: transport)
/// let session = try await accounts.logIn(request)
/// await transport.close()
/// ```
public final class BalancedClientTransport: ClientTransport, Sendable {
    /// How a ``BalancedClientTransport`` checks health and fails over.
    public struct Configuration: Sendable {
        /// How long to wait between two rounds of health checks (default 1 s).
        public var healthCheckInterval: Duration
        /// How long one health check may take before the address counts as unhealthy (default 1 s).
        public var healthCheckTimeout: Duration
        /// The service name asked of `skiff.health.v1.Health/Check`; `""` (the default) stands for
        /// the server as a whole.
        public var healthCheckService: String
        /// How many other addresses a call that no server processed is retried on (default 2: a
        /// call tries at most three addresses). `0` turns failover off.
        public var maxFailovers: Int

        /// Creates a configuration; every parameter has a default.
        /// - Parameters:
        ///   - healthCheckInterval: the time between two rounds of health checks.
        ///   - healthCheckTimeout: how long one health check may take.
        ///   - healthCheckService: the service whose health is asked; `""` for the whole server.
        ///   - maxFailovers: how many other addresses an unprocessed call is retried on.
        public init(
            healthCheckInterval: Duration = .seconds(1),
            healthCheckTimeout: Duration = .seconds(1),
            healthCheckService: String = "",
            maxFailovers: Int = 2
        ) {
            self.healthCheckInterval = healthCheckInterval
            self.healthCheckTimeout = healthCheckTimeout
            self.healthCheckService = healthCheckService
            self.maxFailovers = maxFailovers
        }
    }

    /// How health checks and failover behave.
    public let configuration: Configuration
    let balancer: Balancer
    private let healthChecks: Mutex<Task<Void, Never>?>

    /// Creates the transport and starts its health checks; no connection opens before the first
    /// health check or call.
    /// - Parameters:
    ///   - targets: the addresses of the service (at least one; duplicates count as separate
    ///     addresses).
    ///   - configuration: health checks and failover.
    ///   - connection: the configuration of every address's ``ClientConnection``. Its
    ///     ``ClientConfiguration/backoff`` also paces the reconnection attempts of the health checks
    ///     to an address that is down: a long maximum delay means a long wait before a restarted
    ///     server is seen SERVING again.
    ///   - eventLoopGroup: where the one event loop of the transport comes from.
    public init(
        targets: [ClientConnection.Target],
        configuration: Configuration = .init(),
        connection: ClientConfiguration = .defaults,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        precondition(!targets.isEmpty, "a BalancedClientTransport needs at least one target")
        let loop = eventLoopGroup.next()
        self.configuration = configuration
        self.balancer = Balancer(
            addresses: targets.map { BalancedAddress(target: $0, configuration: connection, eventLoop: loop) },
            maxFailovers: max(0, configuration.maxFailovers)
        )
        let balancer = self.balancer
        self.healthChecks = Mutex(Task { await balancer.runHealthChecks(configuration) })
    }

    deinit {
        // Dropped without `close()`: at least stop the health checks (the connections close as
        // they are released).
        healthChecks.withLock { $0?.cancel() }
    }

    /// The addresses, in the order given.
    public var targets: [ClientConnection.Target] { balancer.addresses.map(\.connection.target) }

    /// The addresses that calls go to now: those considered healthy, in the order given. Empty
    /// when none is (calls then go to all of them in turn).
    public var healthyTargets: [ClientConnection.Target] {
        balancer.addresses.filter(\.isHealthy).map(\.connection.target)
    }

    /// Closes gracefully: new calls fail with UNAVAILABLE, the health checks stop (no check runs
    /// once this returns), calls in flight finish, then every connection closes. Returns once
    /// they have.
    public func close() async {
        balancer.closed.store(true, ordering: .sequentiallyConsistent)
        let task = healthChecks.withLock { task in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        await withTaskGroup(of: Void.self) { group in
            for address in balancer.addresses { group.addTask { await address.connection.close() } }
        }
    }

    // MARK: ClientTransport

    /// Makes a unary call on the next healthy address; a call no server processed moves to
    /// another address (see the type's documentation).
    public func unary<Request: Message, Response: Message>(
        _ method: MethodDescriptor,
        request: Request,
        options: CallOptions,
        responseType: Response.Type
    ) async throws -> ClientResponse<Response> {
        let (address, failover) = try balancer.startCall()
        return try await address.connection.unary(
            method,
            request: request,
            options: options,
            responseType: responseType,
            failover: failover
        )
    }

    /// Makes a streaming call on the next healthy address; it moves to another address only while
    /// no server has accepted it and its request so far fits in the retry buffer (see the type's
    /// documentation).
    public func streaming<Request: Message, Response: Message, Result: Sendable>(
        _ method: MethodDescriptor,
        options: CallOptions,
        requestType: Request.Type,
        responseType: Response.Type,
        requests: @escaping @Sendable (RPCWriter<Request>) async throws -> Void,
        body: @escaping @Sendable (StreamingClientResponse<Response>) async throws -> Result
    ) async throws -> Result {
        let (address, failover) = try balancer.startCall()
        return try await address.connection.streaming(
            method,
            options: options,
            requestType: requestType,
            responseType: responseType,
            failover: failover,
            requests: requests,
            body: body
        )
    }
}

/// One address of a ``BalancedClientTransport``: its connection and what is known of its health.
final class BalancedAddress: Sendable {
    let connection: ClientConnection
    private let health: Health

    /// The health of an address, shared with its connection manager (which reports trouble).
    final class Health: Sendable {
        /// Whether calls go here.
        let healthy = Atomic<Bool>(true)
        /// Counts reports of trouble: a health check that saw SERVING applies it only if no trouble
        /// was reported since it started, so that an answer from a server that has since sent
        /// GOAWAY does not bring it back.
        let troubleReports = Atomic<Int>(0)
        /// Health checks that finished, for tests.
        let checks = Atomic<Int>(0)

        func reportTrouble() {
            troubleReports.wrappingAdd(1, ordering: .sequentiallyConsistent)
            healthy.store(false, ordering: .sequentiallyConsistent)
        }
    }

    init(target: ClientConnection.Target, configuration: ClientConfiguration, eventLoop: any EventLoop) {
        let health = Health()
        self.health = health
        self.connection = ClientConnection(
            target: target,
            configuration: configuration,
            eventLoop: eventLoop,
            onTrouble: { health.reportTrouble() }
        )
    }

    var isHealthy: Bool { health.healthy.load(ordering: .relaxed) }
    /// How many health checks of this address have finished.
    var checksDone: Int { health.checks.load(ordering: .relaxed) }

    func reportTrouble() { health.reportTrouble() }

    /// Sets the health as a health check would (for tests).
    func setHealthy(_ healthy: Bool) { health.healthy.store(healthy, ordering: .sequentiallyConsistent) }

    /// Asks the address's health service; updates the health from the answer.
    func checkHealth(_ request: Skiff_Health_V1_HealthCheckRequest, timeout: Duration) async {
        let troubleBefore = health.troubleReports.load(ordering: .sequentiallyConsistent)
        let serving: Bool
        do {
            let response = try await connection.unary(
                Skiff_Health_V1_Health.Method.Check.descriptor,
                request: request,
                options: CallOptions(timeout: timeout),
                responseType: Skiff_Health_V1_HealthCheckResponse.self
            )
            serving = response.message.status == .serving
        } catch {
            serving = false
        }
        if !serving {
            health.healthy.store(false, ordering: .sequentiallyConsistent)
        } else if health.troubleReports.load(ordering: .sequentiallyConsistent) == troubleBefore {
            health.healthy.store(true, ordering: .sequentiallyConsistent)
        }
        health.checks.wrappingAdd(1, ordering: .relaxed)
    }
}

/// The state every call of a ``BalancedClientTransport`` shares: the addresses, the round-robin
/// position, whether the transport is closed.
final class Balancer: Sendable {
    let addresses: [BalancedAddress]
    let maxFailovers: Int
    let closed = Atomic<Bool>(false)
    private let nextIndex = Atomic<Int>(0)

    init(addresses: [BalancedAddress], maxFailovers: Int) {
        self.addresses = addresses
        self.maxFailovers = maxFailovers
    }

    var isClosed: Bool { closed.load(ordering: .sequentiallyConsistent) }

    /// The address a new call goes to, and its failover state.
    func startCall() throws -> (BalancedAddress, CallFailover) {
        guard !isClosed else {
            throw RPCError(code: .unavailable, message: "The balanced client transport is closed.")
        }
        let address = pick(excluding: [])!
        return (address, CallFailover(balancer: self, tried: [address.connection.manager], remaining: maxFailovers))
    }

    /// The next address round-robin: among the healthy ones not excluded, or when there is none,
    /// among all not excluded. `nil` when every address is excluded.
    func pick(excluding excluded: [ConnectionManager]) -> BalancedAddress? {
        let start = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        let count = addresses.count
        var fallback: BalancedAddress?
        for offset in 0..<count {
            let address = addresses[Int(UInt(bitPattern: start &+ offset) % UInt(count))]
            if excluded.contains(where: { $0 === address.connection.manager }) { continue }
            if address.isHealthy { return address }
            if fallback == nil { fallback = address }
        }
        return fallback
    }

    /// The address whose connection manager is `manager`.
    func address(of manager: ConnectionManager) -> BalancedAddress? {
        addresses.first { $0.connection.manager === manager }
    }

    /// Checks every address, then waits the interval, until cancelled.
    func runHealthChecks(_ configuration: BalancedClientTransport.Configuration) async {
        let request = Skiff_Health_V1_HealthCheckRequest.with { $0.service = configuration.healthCheckService }
        while !Task.isCancelled {
            await withTaskGroup(of: Void.self) { group in
                for address in addresses {
                    group.addTask { await address.checkHealth(request, timeout: configuration.healthCheckTimeout) }
                }
            }
            do {
                try await Task.sleep(for: configuration.healthCheckInterval)
            } catch {
                return
            }
        }
    }
}

/// A balanced call's way to another address: the addresses it has tried and the failovers it has
/// left. It lives in the call's ``ClientStream`` and is used on its event loop only.
struct CallFailover: Sendable {
    let balancer: Balancer
    private(set) var tried: [ConnectionManager]
    private(set) var remaining: Int

    init(balancer: Balancer, tried: [ConnectionManager], remaining: Int) {
        self.balancer = balancer
        self.tried = tried
        self.remaining = remaining
    }

    /// The call failed with UNAVAILABLE on `manager`'s address without being processed: marks that
    /// address unhealthy and returns the manager of the address to try next, or `nil` (no failover
    /// left, every address tried, or the transport closed).
    mutating func next(after manager: ConnectionManager, error: RPCError) -> ConnectionManager? {
        guard !balancer.isClosed else { return nil }
        balancer.address(of: manager)?.reportTrouble()
        if !tried.contains(where: { $0 === manager }) { tried.append(manager) }
        guard remaining > 0, let next = balancer.pick(excluding: tried) else { return nil }
        remaining -= 1
        tried.append(next.connection.manager)
        return next.connection.manager
    }
}
