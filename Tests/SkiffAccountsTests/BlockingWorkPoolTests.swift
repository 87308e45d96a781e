import Dispatch
import Foundation
import SkiffAccounts
import Synchronization
import Testing

@Suite("Blocking work pool")
struct BlockingWorkPoolTests {
    /// Tracks how many jobs run at once.
    final class ConcurrencyProbe: Sendable {
        private let state = Mutex((current: 0, maximum: 0, finished: 0))

        func enter() {
            state.withLock { state in
                state.current += 1
                state.maximum = max(state.maximum, state.current)
            }
        }

        func leave() {
            state.withLock { state in
                state.current -= 1
                state.finished += 1
            }
        }

        var maximum: Int { state.withLock { $0.maximum } }
        var finished: Int { state.withLock { $0.finished } }
    }

    @Test("A burst of 16 jobs with a limit of 2 never runs more than 2 at once, and all finish")
    func limit() async throws {
        let pool = BlockingWorkPool(label: "test.limit", maximumConcurrency: 2)
        let probe = ConcurrencyProbe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try await pool.run {
                        probe.enter()
                        usleep(5_000)  // blocking work, on the pool's threads
                        probe.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(probe.maximum == 2)
        #expect(probe.finished == 16)
    }

    /// Results collected from concurrent jobs.
    final class Results: Sendable {
        private let values = Mutex<[Int?]>([])

        func withLock<R>(_ body: (inout [Int?]) -> R) -> R { values.withLock { body(&$0) } }
    }

    @Test("Past maximumQueueLength waiting jobs, a job is refused at once with QueueFullError; later ones fit again")
    func queueBound() async throws {
        let pool = BlockingWorkPool(label: "test.queue", maximumConcurrency: 1, maximumQueueLength: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let running = Task {
            try await pool.run {
                started.signal()
                gate.wait()
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        // The only thread is blocked: of five more jobs, one waits and four are refused, in any order.
        let results = Results()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do {
                        let value = try await pool.run { 42 }
                        results.withLock { $0.append(value) }
                    } catch let error as BlockingWorkPool.QueueFullError {
                        #expect(error.maximumQueueLength == 1)
                        results.withLock { $0.append(nil) }
                        if results.withLock({ $0.count }) == 4 { gate.signal() }
                    } catch {
                        Issue.record("unexpected \(error)")
                    }
                }
            }
        }
        try await running.value
        #expect(results.withLock { $0.filter { $0 == nil }.count } == 4)
        #expect(results.withLock { $0.compactMap { $0 } } == [42])
        #expect(try await pool.run { 7 } == 7)
    }

    @Test("Blocked jobs do not starve the cooperative pool")
    func offCallerExecutor() async throws {
        // More blocked jobs than the cooperative pool has threads: if jobs ran there, the task that
        // releases them could never run, and every wait would time out.
        let jobs = ProcessInfo.processInfo.activeProcessorCount * 2 + 1
        let pool = BlockingWorkPool(label: "test.starve", maximumConcurrency: jobs)
        let probe = ConcurrencyProbe()
        let gate = DispatchSemaphore(value: 0)
        let released = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<jobs {
                group.addTask {
                    try await pool.run {
                        probe.enter()
                        defer { probe.leave() }
                        return gate.wait(timeout: .now() + 30) == .success
                    }
                }
            }
            group.addTask {
                while probe.maximum < jobs { try await Task.sleep(for: .milliseconds(1)) }
                for _ in 0..<jobs { gate.signal() }
                return true
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(released == Array(repeating: true, count: jobs + 1))
    }

    @Test("Blocked jobs do not starve libdispatch's shared threads either")
    func ownThreads() async throws {
        let jobs = ProcessInfo.processInfo.activeProcessorCount * 2 + 1
        let pool = BlockingWorkPool(label: "test.own", maximumConcurrency: jobs)

        let probe = ConcurrencyProbe()
        let gate = DispatchSemaphore(value: 0)
        let released = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<jobs {
                group.addTask {
                    try await pool.run {
                        probe.enter()
                        defer { probe.leave() }
                        return gate.wait(timeout: .now() + 30) == .success
                    }
                }
            }
            // The releaser runs on libdispatch's shared threads: it must get one while every job blocks.
            group.addTask {
                while probe.maximum < jobs { try await Task.sleep(for: .milliseconds(1)) }
                await withCheckedContinuation { continuation in
                    DispatchQueue.global(qos: .userInitiated).async {
                        for _ in 0..<jobs { gate.signal() }
                        continuation.resume()
                    }
                }
                return true
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(released == Array(repeating: true, count: jobs + 1))
    }

    @Test("Results and errors come back to the caller")
    func results() async throws {
        struct Boom: Error, Equatable {}
        let pool = BlockingWorkPool(label: "test.results", maximumConcurrency: 1)
        #expect(try await pool.run { 6 * 7 } == 42)
        await #expect(throws: Boom()) { try await pool.run { throw Boom() } }
        #expect(try await pool.run { "still works" } == "still works")
    }

    @Test("A caller cancelled while queued leaves the queue without taking a permit")
    func cancellationWhileQueued() async throws {
        let pool = BlockingWorkPool(label: "test.cancel", maximumConcurrency: 1)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)

        async let blocker: Void = pool.run {
            started.signal()
            gate.wait()
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        let queued = Task { try await pool.run { "should not run" } }
        try await Task.sleep(for: .milliseconds(20))
        queued.cancel()
        await #expect(throws: CancellationError.self) { _ = try await queued.value }

        gate.signal()
        try await blocker
        // The permit came back: the pool still runs work.
        #expect(try await pool.run { 1 } == 1)
    }

    @Test("Already-cancelled callers do not start")
    func alreadyCancelled() async {
        let pool = BlockingWorkPool(label: "test.precancelled", maximumConcurrency: 1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { "ran" }
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }
}
