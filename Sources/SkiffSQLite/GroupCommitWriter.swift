import Dispatch
import Foundation
import GRDB
import SkiffDomain
import Synchronization

/// Runs the stores' write transactions with group commit: the writes that arrive while one transaction is
/// committing wait for it, then all run together in the next transaction, each in its own savepoint, and
/// share its single commit (one fsync).
///
/// - **Durability is unchanged.** A caller resumes only after the transaction holding its write has
///   committed with `synchronous = FULL`, so an acknowledged write survives a crash or power loss exactly
///   as it did with one transaction per write.
/// - **Isolation between writes.** Each write runs in its own `SAVEPOINT`; one that throws is rolled back
///   to its savepoint and gets its own error, and the others in the group commit normally. Writes in a
///   group run one after another in arrival order, each seeing the effects of those before it: the same
///   serial order the single writer connection gave before.
/// - **Bounded.** A group holds at most ``maximumGroupSize`` writes, so one commit's latency stays bounded
///   however many writes are waiting; the rest form the next group.
/// - **Off the caller's threads.** Groups run on one serial dispatch queue (which waits on GRDB's writer
///   queue); no blocking SQLite work runs on an event loop or on Swift's cooperative pool.
///
/// If the commit itself fails (disk full, I/O error), every write of the group fails with that error.
final class GroupCommitWriter: Sendable {
    /// The most writes one transaction holds.
    let maximumGroupSize: Int

    private let pool: DatabasePool
    private let queue = DispatchQueue(label: "skiff.sqlite.group-commit")
    private let state = Mutex(State())

    private struct State {
        var pending: [Job] = []
        var draining = false
        var statistics = Statistics()
    }

    /// What the writer has done since it started.
    struct Statistics: Hashable, Sendable {
        /// Transactions run (committed or not).
        var groups = 0
        /// Writes run in them.
        var writes = 0
        /// The most writes one transaction held.
        var largestGroup = 0
    }

    /// What the writer has done since it started.
    var statistics: Statistics { state.withLock { $0.statistics } }

    /// The writes waiting for the next group.
    var waitingCount: Int { state.withLock { $0.pending.count } }

    /// One write waiting for its group.
    private struct Job: Sendable {
        /// Runs the write inside its savepoint and returns how to complete the caller once the group's
        /// commit has succeeded (`nil`) or failed (its error).
        let run: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        /// Completes the caller with an error when the write never ran (its transaction did not begin).
        let fail: @Sendable (any Error) -> Void
    }

    init(pool: DatabasePool, maximumGroupSize: Int = 256) {
        self.pool = pool
        self.maximumGroupSize = max(1, maximumGroupSize)
    }

    /// Runs one use case as a write in the next group's transaction, with SQLite errors mapped to
    /// ``SkiffDomain/DomainError``; returns after that transaction has committed.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(
                run: { db in
                    let result = Result<T, any Error> {
                        var value: T?
                        try db.inSavepoint {
                            value = try updates(db)
                            return .commit
                        }
                        // `inSavepoint` returned without throwing, so the closure ran to its end.
                        return value!
                    }
                    return { commitError in
                        switch (result, commitError) {
                        case (.success, let error?): continuation.resume(throwing: Self.mapped(error))
                        case (.success(let value), nil): continuation.resume(returning: value)
                        case (.failure(let error), _): continuation.resume(throwing: Self.mapped(error))
                        }
                    }
                },
                fail: { error in continuation.resume(throwing: Self.mapped(error)) }
            )
            enqueue(job)
        }
    }

    private func enqueue(_ job: Job) {
        let start = state.withLock { state -> Bool in
            state.pending.append(job)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { queue.async { self.drain() } }
    }

    /// Runs groups until no write is waiting.
    private func drain() {
        while true {
            let group = state.withLock { state -> [Job] in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    return []
                }
                let count = min(state.pending.count, maximumGroupSize)
                let group = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                state.statistics.groups += 1
                state.statistics.writes += count
                state.statistics.largestGroup = max(state.statistics.largestGroup, count)
                return group
            }
            if group.isEmpty { return }
            run(group)
        }
    }

    private func run(_ group: [Job]) {
        var completions: [@Sendable ((any Error)?) -> Void] = []
        completions.reserveCapacity(group.count)
        do {
            try pool.writeWithoutTransaction { db in
                try db.inTransaction(.immediate) {
                    for job in group { completions.append(job.run(db)) }
                    return .commit
                }
            }
            for complete in completions { complete(nil) }
        } catch {
            // The transaction did not commit: nothing of the group is stored. The writes that ran complete
            // with the commit's error, and those that never ran (the transaction failed to begin) too.
            for complete in completions { complete(error) }
            for job in group.dropFirst(completions.count) { job.fail(error) }
        }
    }

    /// A SQLite error mapped to the domain error it stands for; other errors unchanged.
    static func mapped(_ error: any Error) -> any Error {
        if let error = error as? DatabaseError { return error.domainError ?? error }
        return error
    }
}
