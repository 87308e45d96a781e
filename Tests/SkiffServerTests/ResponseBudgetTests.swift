import SkiffCore
import SkiffTesting
import Testing

@testable import SkiffServer

/// The per-connection response budget on its own, without I/O.
@Suite("Response budget")
struct ResponseBudgetTests {
    @Test("writers get through at once below the limit; one message may overshoot it")
    func belowTheLimit() async {
        let budget = ResponseBudget(limit: 100)
        #expect(await budget.reserve(60))
        #expect(await budget.reserve(60))  // 60 < 100 when it asked: allowed to overshoot
        #expect(budget.queued == 120)
        budget.release(120)
        #expect(budget.queued == 0)
    }

    @Test("at the limit writers wait, in order of arrival, until bytes are released")
    func writersWaitInOrder() async throws {
        let observer = ServerObserver()
        let budget = ResponseBudget(limit: 100, observer: observer)
        #expect(await budget.reserve(100))
        let first = Task { await budget.reserve(100) }
        try await waitUntil { budget.waitingWriters == 1 }
        let second = Task { await budget.reserve(30) }
        try await waitUntil { budget.waitingWriters == 2 }
        // The second would fit after a small release, but it queued behind the first.
        budget.release(50)
        #expect(await first.value)
        #expect(budget.waitingWriters == 1)
        #expect(budget.queued == 150)
        budget.release(100)
        #expect(await second.value)
        #expect(budget.queued == 80)
        #expect(observer.bufferedResponseBytes == 80)
    }

    @Test("no handler is admitted while the socket is blocked or the budget is used up")
    func admissions() async throws {
        let budget = ResponseBudget(limit: 100)
        #expect(await budget.admit())
        budget.setSocketBlocked(true)
        let admitted = Task { await budget.admit() }
        try await waitUntil { budget.waitingAdmissions == 1 }
        #expect(await budget.reserve(150))
        budget.setSocketBlocked(false)  // the socket drains, but the budget is still full
        try await Task.sleep(for: .milliseconds(20))
        #expect(budget.waitingAdmissions == 1)
        budget.release(150)
        #expect(await admitted.value)
    }

    @Test("closing the connection fails every waiter and gives every byte back")
    func closeFailsWaiters() async throws {
        let observer = ServerObserver()
        let budget = ResponseBudget(limit: 10, observer: observer)
        #expect(await budget.reserve(50))
        let writer = Task { await budget.reserve(5) }
        let admission = Task { await budget.admit() }
        try await waitUntil { budget.waitingWriters == 1 && budget.waitingAdmissions == 1 }
        budget.close()
        #expect(await writer.value == false)
        #expect(await admission.value == false)
        #expect(await budget.reserve(1) == false)
        budget.release(50)  // a late release after close changes nothing
        #expect(budget.queued == 0)
        #expect(observer.bufferedResponseBytes == 0)
    }

    @Test("a cancelled writer leaves the queue and lets the next one through")
    func cancellation() async throws {
        let budget = ResponseBudget(limit: 10)
        #expect(await budget.reserve(10))
        let cancelled = Task { await budget.reserve(5) }
        try await waitUntil { budget.waitingWriters == 1 }
        let next = Task { await budget.reserve(5) }
        try await waitUntil { budget.waitingWriters == 2 }
        cancelled.cancel()
        #expect(await cancelled.value == false)
        budget.release(10)
        #expect(await next.value)
        #expect(budget.queued == 5)
    }
}

@Suite("Log lines stay small")
struct BoundedLogTextTests {
    @Test("request-derived text is cut to 300 characters, with its size")
    func bounded() {
        #expect(LogText.bounded("short reason") == "short reason")
        let long = LogText.bounded(String(repeating: "SELECT * FROM listing WHERE tag = ? ", count: 10_000))
        #expect(long.count < 330)
        #expect(long.hasSuffix("(360000 bytes)"))
    }
}
