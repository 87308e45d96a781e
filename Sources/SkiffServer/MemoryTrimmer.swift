#if canImport(Glibc)
import Glibc
#endif

/// Gives memory freed by closed connections back to the operating system.
///
/// glibc's allocator keeps freed memory in its arenas, so after a burst of connections (or an
/// attack's worth of streams) has come and gone the server's RSS would stay at its peak. The
/// server calls ``trim()`` now and then after connections have closed; elsewhere it does nothing.
enum MemoryTrimmer {
    private typealias Trim = @convention(c) (Int) -> Int32

    #if canImport(Glibc)
    private static let mallocTrim: Trim? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()
    #else
    private static let mallocTrim: Trim? = nil
    #endif

    /// Returns free heap memory to the system where the allocator supports it.
    static func trim() {
        _ = mallocTrim?(0)
    }
}
