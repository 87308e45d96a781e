import SkiffDomain
import Testing

@Suite("ReadWriteLock")
struct ReadWriteLockTests {
    struct Pair {
        var a = 0
        var b = 0
    }

    @Test("Writes are atomic and none is lost while readers run alongside; readers never see a half write")
    func atomicUnderContention() async {
        let lock = ReadWriteLock(Pair())
        let torn = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<2_000 {
                        lock.withWriteLock { pair in
                            pair.a += 1
                            pair.b -= 1
                        }
                    }
                    return 0
                }
                group.addTask {
                    var torn = 0
                    for _ in 0..<2_000 where lock.withReadLock({ $0.a + $0.b }) != 0 { torn += 1 }
                    return torn
                }
            }
            return await group.reduce(0, +)
        }
        #expect(torn == 0)
        #expect(lock.withReadLock { $0.a } == 8_000)
    }

    @Test("Errors thrown inside release the lock")
    func throwingReleases() {
        struct Failure: Error {}
        let lock = ReadWriteLock(1)
        #expect(throws: Failure.self) { try lock.withWriteLock { (_: inout Int) throws(Failure) in throw Failure() } }
        #expect(throws: Failure.self) {
            try lock.withReadLock { (_: borrowing Int) throws(Failure) in throw Failure() }
        }
        lock.withWriteLock { $0 += 1 }
        #expect(lock.withReadLock { $0 } == 2)
    }
}
