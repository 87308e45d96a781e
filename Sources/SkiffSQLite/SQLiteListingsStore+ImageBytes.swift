public import Foundation
import GRDB
import GRDBSQLite
import SkiffDomain
public import SkiffListings

/// Image downloads read a BLOB piece by piece with SQLite's incremental BLOB I/O
/// (`sqlite3_blob_read`), which reads only the pages of the piece: a download costs one
/// chunk of memory at a time, and reading it whole chunk by chunk stays linear in its size.
extension SQLiteListingsStore {
    public func imageHeader(id: String) async throws -> ImageHeader? {
        try await pool.domainRead { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT id, ownerID, contentType, sizeBytes, createdAt FROM image WHERE id = ?"
                ),
                arguments: [id]
            ).map { row in
                ImageHeader(
                    id: row["id"],
                    ownerID: row["ownerID"],
                    contentType: ImageContentType(rawValue: row["contentType"]) ?? .jpeg,
                    sizeBytes: row["sizeBytes"],
                    createdAt: Date(millisecondsSince1970: row["createdAt"])
                )
            }
        }
    }

    public func imageBytes(id: String, offset: Int, length: Int) async throws -> Data? {
        try await pool.domainRead { db in
            guard
                let rowID = try Int64.fetchOne(
                    db.cachedStatement(sql: "SELECT rowid FROM image WHERE id = ?"),
                    arguments: [id]
                )
            else { return nil }
            var blob: OpaquePointer?
            let opened = sqlite3_blob_open(db.sqliteConnection, "main", "image", "bytes", rowID, 0, &blob)
            defer { sqlite3_blob_close(blob) }
            guard opened == SQLITE_OK, let blob else {
                throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: "cannot open image bytes")
            }
            let total = Int(sqlite3_blob_bytes(blob))
            let start = min(max(0, offset), total)
            let count = min(max(0, length), total - start)
            var data = Data(count: count)
            guard count > 0 else { return data }
            let read = data.withUnsafeMutableBytes { buffer in
                sqlite3_blob_read(blob, buffer.baseAddress, Int32(count), Int32(start))
            }
            guard read == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: read), message: "cannot read image bytes")
            }
            return data
        }
    }
}
