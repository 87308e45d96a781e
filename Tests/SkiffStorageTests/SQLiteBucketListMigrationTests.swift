import Foundation
import GRDB
import SkiffBucketList
import SkiffDomain
import SkiffTesting
import Testing

@testable import SkiffSQLite

@Suite("SQLite: bucketlist-v4 (entries in the order they were added)")
struct SQLiteBucketListMigrationTests {
    @Test("entries stored before bucketlist-v4 keep their old order; entries added later come after them")
    func upgrade() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("skiff.sqlite").path
            try await makeDatabase(path, before: "bucketlist-v4") { db in
                for id in ["act_a", "act_b", "act_c", "act_d"] {
                    try db.execute(
                        sql: """
                            INSERT INTO activity (id, ownerID, title, description, placeName, latitude, longitude, tags,
                                createdAt, updatedAt)
                            VALUES (?, 'usr_owner', ?, '', 'Here', 36.1, -86.8, '[]', 0, 0)
                            """,
                        arguments: [id, "Title \(id)"]
                    )
                }
                for list in ["bkl_1", "bkl_2"] {
                    try db.execute(
                        sql: """
                            INSERT INTO bucketList (id, ownerID, name, nameKey, description, visibility, createdAt,
                                updatedAt)
                            VALUES (?, 'usr_owner', ?, ?, '', 'public', 0, 0)
                            """,
                        arguments: [list, list, list]
                    )
                }
                // The old order: time, then id.
                try db.execute(
                    sql: """
                        INSERT INTO bucketListEntry (listID, activityID, addedAt) VALUES
                            ('bkl_1', 'act_c', 2000), ('bkl_1', 'act_b', 1000), ('bkl_1', 'act_a', 2000),
                            ('bkl_2', 'act_d', 5000)
                        """
                )
            }

            let database = try await SQLiteDatabase.open(atPath: path)
            defer { try? database.close() }
            let store = database.bucketListStore()
            _ = try await store.addEntry(
                listID: "bkl_1",
                ownerID: "usr_owner",
                activityID: "act_d",
                now: Date(millisecondsSince1970: 500),  // an earlier time, added later
                limit: 10
            )
            let first = try await store.entries(listID: "bkl_1", page: try PageRequest(size: 100))
            #expect(first.items.map(\.activity.id) == ["act_b", "act_a", "act_c", "act_d"])
            let second = try await store.entries(listID: "bkl_2", page: try PageRequest(size: 100))
            #expect(second.items.map(\.activity.id) == ["act_d"])
            let positions = try await database.pool.read { db in
                try Int64.fetchAll(
                    db,
                    sql: "SELECT position FROM bucketListEntry WHERE listID = 'bkl_1' ORDER BY position"
                )
            }
            #expect(positions == [1, 2, 3, 4])
        }
    }
}
