import Logging
import SkiffPostgres
import SkiffServerApp
import SkiffTesting
import Synchronization
import Testing

@Suite("Housekeeping on a shared PostgreSQL database")
struct HousekeepingLeaseTests {
    final class Runs: Sendable {
        let count = Mutex(0)
    }

    @Test("Two servers' rounds at once: a shared job runs on one of them; the lease is free again after")
    func oneServerAtATime() async throws {
        try await TestPostgres.withDatabaseLocation { location in
            let first = try await PostgresStorage.open(location)
            let second = try await PostgresStorage.open(location)
            let runs = Runs()
            let job = Housekeeping.Job(name: "slow shared job") {
                runs.count.withLock { $0 += 1 }
                try await Task.sleep(for: .milliseconds(300))
                return 1
            }
            let servers = [
                Housekeeping(jobs: [job.shared(through: first)], logger: quietLogger),
                Housekeeping(jobs: [job.shared(through: second)], logger: quietLogger),
            ]
            await withTaskGroup(of: Void.self) { group in
                for server in servers { group.addTask { await server.runOnce() } }
            }
            #expect(runs.count.withLock { $0 } == 1)
            // Nobody holds it now: the next round runs it again, on either server.
            await servers[1].runOnce()
            #expect(runs.count.withLock { $0 } == 2)
            // A job without a lease runs on every server.
            await Housekeeping(jobs: [job], logger: quietLogger).runOnce()
            #expect(runs.count.withLock { $0 } == 3)
            #expect(try await first.runAlone("free lease") {})
            await first.close()
            await second.close()
        }
    }
}
