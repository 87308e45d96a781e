import SkiffCore
import Synchronization
import Testing

@Suite("DrainSignal")
struct DrainSignalTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func bump() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    @Test("Actions run once when the signal fires; cancelled ones never; late ones at once")
    func firing() {
        let signal = DrainSignal()
        let (kept, cancelled, late) = (Counter(), Counter(), Counter())
        signal.onDrain { kept.bump() }
        let registration = signal.onDrain { cancelled.bump() }
        signal.cancel(registration)
        #expect(!signal.isDraining)
        #expect(kept.count == 0)

        signal.fire()
        signal.fire()
        #expect(signal.isDraining)
        #expect(kept.count == 1)
        #expect(cancelled.count == 0)

        // Registered after the drain began (a call that started in the meantime): runs at once.
        signal.onDrain { late.bump() }
        #expect(late.count == 1)
    }
}
