import Foundation
import GRDB
import SkiffDomain
import Synchronization
import Testing

@testable import SkiffSQLite

/// Group commit through the database's real writer, on a real file: writes that arrive together share a
/// transaction, each keeps its own outcome, and nothing is acknowledged before its commit.
@Suite("SQLite group commit")
struct GroupCommitTests {
    /// Opens a database with two scratch tables (outside Skiff's schema): `note` and `child`, whose
    /// foreign key is checked only at commit.
    private func withScratchDatabase(_ body: (SQLiteDatabase) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(atPath: directory.path("skiff.sqlite"))
        defer { try? database.close() }
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE);
                    CREATE TABLE child (
                        id INTEGER PRIMARY KEY,
                        parentID INTEGER NOT NULL REFERENCES note(id) DEFERRABLE INITIALLY DEFERRED
                    );
                    """
            )
        }
        try await body(database)
    }

    /// Starts a write that holds the writer until `release` is signalled, so that the writes queued
    /// meanwhile form one group.
    private func blockWriter(
        _ database: SQLiteDatabase
    ) async throws -> (release: @Sendable () -> Void, done: Task<Void, any Error>) {
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let done = Task {
            try await database.storePool.domainWrite { db in
                started.signal()
                gate.wait()
                try db.execute(sql: "INSERT INTO note (body) VALUES ('blocker')")
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        return ({ gate.signal() }, done)
    }

    /// Waits (at most 30 s) until `writes` writes wait for the writer.
    private func waitForQueued(_ database: SQLiteDatabase, writes: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while database.storePool.writer.waitingCount < writes {
            guard ContinuousClock.now < deadline else {
                Issue.record("only \(database.storePool.writer.waitingCount) of \(writes) writes queued")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The outcome of a write.
    private func outcome(_ body: () async throws -> Void) async -> Result<Void, any Error> {
        do {
            try await body()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    @Test("One failing write in a group fails alone; the others commit together with one transaction")
    func errorIsolation() async throws {
        try await withScratchDatabase { database in
            let writer = database.storePool.writer
            let before = writer.statistics
            let (release, blocker) = try await blockWriter(database)
            let count = 40
            let tasks = (0..<count).map { index in
                Task { () -> Result<Void, any Error> in
                    await outcome {
                        try await database.storePool.domainWrite { db in
                            try db.execute(sql: "INSERT INTO note (body) VALUES (?)", arguments: ["note \(index)"])
                            if index % 10 == 3 {
                                // A rule refuses this write after it wrote: its row must not survive.
                                throw DomainError(.failedPrecondition, "write \(index) refused")
                            }
                            if index % 10 == 7 {
                                // A constraint refuses this one (the body exists already).
                                try db.execute(sql: "INSERT INTO note (body) VALUES ('note 0')")
                            }
                        }
                    }
                }
            }
            try await waitForQueued(database, writes: count)
            release()
            try await blocker.value
            var outcomes: [Int: Result<Void, any Error>] = [:]
            for (index, task) in tasks.enumerated() { outcomes[index] = await task.value }

            for index in 0..<count {
                switch (index % 10, outcomes[index]!) {
                case (3, .failure(let error)):
                    #expect((error as? DomainError)?.code == .failedPrecondition)
                case (7, .failure(let error)):
                    #expect((error as? DomainError)?.code == .alreadyExists)
                case (3, .success), (7, .success):
                    Issue.record("write \(index) should have failed")
                case (_, .failure(let error)):
                    Issue.record("write \(index) failed: \(error)")
                case (_, .success):
                    break
                }
            }
            let stored = try await database.pool.read { db in try String.fetchSet(db, sql: "SELECT body FROM note") }
            let expected = Set((0..<count).filter { $0 % 10 != 3 && $0 % 10 != 7 }.map { "note \($0)" })
            #expect(stored == expected.union(["blocker"]))
            let after = writer.statistics
            #expect(after.writes - before.writes == count + 1)
            #expect(after.groups - before.groups < count + 1, "the queued writes shared transactions")
            #expect(after.largestGroup > 1)
        }
    }

    @Test("When the group's commit fails, every write in it fails and none is stored")
    func commitFailureFailsTheGroup() async throws {
        try await withScratchDatabase { database in
            let (release, blocker) = try await blockWriter(database)
            let tasks = (0..<6).map { index in
                Task { () -> Result<Void, any Error> in
                    await outcome {
                        try await database.storePool.domainWrite { db in
                            if index == 2 {
                                // Passes its savepoint; the deferred foreign key fails the COMMIT.
                                try db.execute(sql: "INSERT INTO child (parentID) VALUES (9999)")
                            } else {
                                try db.execute(sql: "INSERT INTO note (body) VALUES (?)", arguments: ["group \(index)"])
                            }
                        }
                    }
                }
            }
            try await waitForQueued(database, writes: 6)
            release()
            try await blocker.value
            var failures = 0
            for task in tasks {
                if case .failure = await task.value { failures += 1 }
            }
            let stored = try await database.pool.read { db in
                try String.fetchSet(db, sql: "SELECT body FROM note WHERE body LIKE 'group %'")
            }
            let grouped = database.storePool.writer.statistics.largestGroup
            #expect(grouped == 6, "the six writes waited behind the blocker and ran as one group")
            #expect(failures == 6)
            #expect(stored.isEmpty)
            // The writer goes on: the next write commits.
            try await database.storePool.domainWrite { db in
                try db.execute(sql: "INSERT INTO note (body) VALUES ('after')")
            }
            #expect(
                try await database.pool.read { db in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note WHERE body = 'after'")
                } == 1
            )
        }
    }

    @Test("A group never holds more than its maximum; many concurrent writes all commit")
    func boundedGroups() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try await SQLiteDatabase.open(
            atPath: directory.path("skiff.sqlite"),
            configuration: .init(maximumWriteGroupSize: 8)
        )
        defer { try? database.close() }
        try await database.pool.write { db in
            try db.execute(sql: "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask {
                    try await database.storePool.domainWrite { db in
                        try db.execute(sql: "INSERT INTO note (body) VALUES (?)", arguments: ["n\(index)"])
                    }
                }
            }
            try await group.waitForAll()
        }
        let statistics = database.storePool.writer.statistics
        #expect(statistics.largestGroup <= 8)
        #expect(statistics.writes == 300)
        #expect(try await database.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM note") } == 300)
    }
}
