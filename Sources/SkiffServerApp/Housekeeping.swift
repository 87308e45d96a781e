public import Foundation
public import Logging
public import ServiceLifecycle
import SkiffCore
import SkiffDomain

/// Lets one server at a time do a job that several servers on one database would otherwise all do.
public protocol HousekeepingLease: Sendable {
    /// Runs `body` unless another server holds the lease `name`, holding it meanwhile; returns whether
    /// `body` ran.
    func runAlone(_ name: String, _ body: () async throws -> Void) async throws -> Bool
}

/// Periodic clean-up the stores need: expired sessions and one-time tokens, old listing-change
/// events past their replay window, uploaded images no listing uses after 24 hours. Runs once at start, then every ``interval``, until graceful
/// shutdown.
public struct Housekeeping: Service {
    /// One clean-up job: its name (for the log) and the work, returning how many rows it removed.
    public struct Job: Sendable {
        public var name: String
        public var run: @Sendable () async throws -> Int
        /// When set, the job's data is shared with other servers (one PostgreSQL database): each round,
        /// only the server that gets the lease runs it; the others skip it.
        public var lease: (any HousekeepingLease)?

        public init(name: String, run: @escaping @Sendable () async throws -> Int) {
            self.name = name
            self.run = run
        }

        /// The job run by one server at a time through `lease` (`nil`: by every server, as before).
        public func shared(through lease: (any HousekeepingLease)?) -> Job {
            var job = self
            job.lease = lease
            return job
        }

        /// A job that deletes what is older than `window`: `prune` gets the cut-off and returns how
        /// many rows it removed.
        public static func pruning(
            _ name: String,
            keeping window: Duration,
            _ prune: @escaping @Sendable (Date) async throws -> Int
        ) -> Job {
            Job(name: name) { try await prune(Date().addingTimeInterval(-window.timeInterval)) }
        }

        /// A job that publishes to the Chat feed, again, what a service recorded in the last
        /// `window` (idempotent on the feed's side); it removes nothing.
        public static func relaying(
            _ what: String,
            window: Duration,
            _ relay: @escaping @Sendable (Date) async throws -> Int
        ) -> Job {
            Job(name: "\(what) published to the feed again") {
                _ = try await relay(Date().addingTimeInterval(-window.timeInterval))
                return 0
            }
        }
    }

    public let interval: Duration
    public let jobs: [Job]
    public let logger: Logger

    public init(interval: Duration = .seconds(600), jobs: [Job], logger: Logger) {
        self.interval = interval
        self.jobs = jobs
        self.logger = logger
    }

    /// Runs every job once; a failing job is logged and does not stop the others.
    public func runOnce() async {
        for job in jobs {
            do {
                var removed = 0
                if let lease = job.lease {
                    let ran = try await lease.runAlone("housekeeping: \(job.name)") { removed = try await job.run() }
                    if !ran {
                        logger.debug("housekeeping skipped: another server runs it", metadata: ["job": "\(job.name)"])
                        continue
                    }
                } else {
                    removed = try await job.run()
                }
                if removed > 0 {
                    logger.info("housekeeping", metadata: ["job": "\(job.name)", "removed": "\(removed)"])
                }
            } catch {
                logger.error(
                    "housekeeping failed",
                    metadata: ["job": "\(job.name)", "error": "\(LogText.bounded(error))"]
                )
            }
        }
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await runOnce()
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
