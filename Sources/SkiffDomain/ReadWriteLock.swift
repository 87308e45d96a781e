#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a reader–writer lock: any number of readers at once, or one writer. The in-memory
/// stores keep their state in one, so that searches (reads) run on every core while writes stay atomic.
///
/// Writers are preferred (on Linux, `PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`): a steady stream of
/// readers cannot starve a write. Like `Mutex`, it blocks the calling thread, so the work inside must be
/// short and must not suspend; neither lock is reentrant.
package final class ReadWriteLock<Value>: @unchecked Sendable {
    private var value: Value
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    /// Creates a lock holding `value`.
    package init(_ value: Value) {
        self.value = value
        lock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value, alongside other readers.
    package func withReadLock<Result, Failure: Error>(
        _ body: (borrowing Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    /// Runs `body` with the value to change, alone.
    package func withWriteLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}
