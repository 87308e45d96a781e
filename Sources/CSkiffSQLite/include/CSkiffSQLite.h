#ifndef CSKIFF_SQLITE_H
#define CSKIFF_SQLITE_H

/// Turns off SQLite's memory statistics for this process (`sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0)`),
/// which Swift cannot call itself: the function is variadic.
///
/// With statistics on (SQLite's default), every allocation and free SQLite makes takes one process-wide
/// mutex to count the bytes, so connections on different threads queue on it. Skiff reads none of those
/// statistics and sets no soft heap limit (which needs them).
///
/// It only works before SQLite is initialized, that is before the process opens its first connection;
/// afterwards SQLite refuses it and the statistics stay on. Not thread-safe: call it once, before any
/// other SQLite call (`SQLiteDatabase` does, through a `static let`).
///
/// Returns 1 when the statistics are off, 0 when SQLite refused (already initialized).
int skiff_sqlite_disable_memory_statistics(void);

#endif
