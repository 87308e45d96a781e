public import Foundation
import GRDB
public import SkiffBids
public import SkiffDomain

// The list and event reads of the SQLite bids store: keyset paging in the order `BidsPaging` defines.
extension SQLiteBidsStore {
    public func listingBids(listingID: String, page: PageRequest) async throws -> Page<Bid> {
        let cursor = try BidsPaging.listingCursor(page, listingID: listingID)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            var sql = "SELECT * FROM bid WHERE listingID = ?"
            var arguments: StatementArguments = [listingID]
            if let cursor {
                sql +=
                    " AND amountCents <= ? AND (amountCents < ? OR (amountCents = ? AND (createdAt > ? OR (createdAt = ? AND id > ?))))"
                arguments += [cursor.a, cursor.a, cursor.a, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY amountCents DESC, createdAt, id LIMIT ?"
            arguments += [limit]
            return try BidRecord.fetchAll(db, sql: sql, arguments: arguments).map(\.bid)
        }
        return BidsPaging.listingPage(fetched, size: page.size, listingID: listingID)
    }

    public func liveBidSummary(listingID: String) async throws -> LiveBidSummary {
        try await pool.domainRead { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT COUNT(*) AS count, COALESCE(MAX(amountCents), 0) AS highest FROM bid
                        WHERE listingID = ? AND state IN ('pending', 'countered')
                        """
                ),
                arguments: [listingID]
            )
            return LiveBidSummary(count: row?["count"] ?? 0, highestAmountCents: row?["highest"] ?? 0)
        }
    }

    public func bids(bidderID: String, states: Set<BidState>, page: PageRequest) async throws -> Page<Bid> {
        let owner = BidsPaging.myBidsOwner(bidderID: bidderID, states: states)
        let cursor = try BidsPaging.newestCursor(page, kind: BidsPaging.myBidsKind, owner: owner)
        let limit = page.size + 1
        let stateNames = states.map(\.rawValue).sorted()
        let fetched = try await pool.domainRead { db in
            var sql = "SELECT * FROM bid WHERE bidderID = ?"
            var arguments: StatementArguments = [bidderID]
            if !stateNames.isEmpty {
                sql += " AND state IN (\(databaseQuestionMarks(count: stateNames.count)))"
                arguments += StatementArguments(stateNames)
            }
            if let cursor {
                sql += " AND createdAt <= ? AND (createdAt < ? OR (createdAt = ? AND id < ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY createdAt DESC, id DESC LIMIT ?"
            arguments += [limit]
            return try BidRecord.fetchAll(db, sql: sql, arguments: arguments).map(\.bid)
        }
        return BidsPaging.bidsPage(fetched, size: page.size, owner: owner)
    }

    public func purchases(buyerID: String, page: PageRequest) async throws -> Page<Sale> {
        try await salesPage(column: "buyerID", kind: BidsPaging.purchasesKind, owner: buyerID, page: page)
    }

    public func sales(sellerID: String, page: PageRequest) async throws -> Page<Sale> {
        try await salesPage(column: "sellerID", kind: BidsPaging.salesKind, owner: sellerID, page: page)
    }

    private func salesPage(column: String, kind: String, owner: String, page: PageRequest) async throws -> Page<Sale> {
        let cursor = try BidsPaging.newestCursor(page, kind: kind, owner: owner)
        let limit = page.size + 1
        let fetched = try await pool.domainRead { db in
            var sql = "SELECT * FROM sale WHERE \(column) = ?"
            var arguments: StatementArguments = [owner]
            if let cursor {
                sql += " AND createdAt <= ? AND (createdAt < ? OR (createdAt = ? AND id < ?))"
                arguments += [cursor.t, cursor.t, cursor.t, cursor.i]
            }
            sql += " ORDER BY createdAt DESC, id DESC LIMIT ?"
            arguments += [limit]
            return try SaleRecord.fetchAll(db, sql: sql, arguments: arguments).map(\.sale)
        }
        return BidsPaging.salesPage(fetched, size: page.size, kind: kind, owner: owner)
    }

    public func events(userID: String, afterSequence: Int64, limit: Int) async throws -> [BidEvent] {
        let limit = max(limit, 0)
        return try await pool.domainRead { db in
            try BidEventRecord.fetchAll(
                db,
                sql: "SELECT * FROM bidEvent WHERE userID = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [userID, afterSequence, limit]
            ).compactMap(\.event)
        }
    }

    public func events(recordedSince date: Date, limit: Int) async throws -> [BidEvent] {
        let limit = max(limit, 0)
        return try await pool.domainRead { db in
            try BidEventRecord.fetchAll(
                db,
                sql: "SELECT * FROM bidEvent WHERE createdAt >= ? ORDER BY createdAt, userID, sequence LIMIT ?",
                arguments: [date.millisecondsSince1970, limit]
            ).compactMap(\.event)
        }
    }
}
