import GRDB
import Testing

@testable import SkiffSQLite

/// Makes the database file at `path` as a release from before `migration` left it: migrated up to the
/// migration before it, with `fill` run on it, then closed. Opening it with `SQLiteDatabase.open` runs
/// `migration` and those after it.
func makeDatabase(
    _ path: String,
    before migration: String,
    _ fill: @escaping @Sendable (Database) throws -> Void
) async throws {
    let old = try DatabasePool(path: path)
    let identifiers = SQLiteSchema.migrationIdentifiers
    let index = try #require(identifiers.firstIndex(of: migration))
    try SQLiteSchema.migrator.migrate(old, upTo: identifiers[index - 1])
    try await old.write(fill)
    try old.close()
}
