import Foundation
package import SkiffDomain

/// Search semantics shared by every ``LostFoundStore`` backend: matching, distance, ordering and keyset
/// paging. Backends may narrow candidates first (SQLite: SQL filters, FTS5, a bounding box), but the final
/// decision and order come from here, so all backends return identical pages.
package struct CompiledLostFoundQuery: Sendable {
    package let query: LostFoundQuery
    /// The keyword terms (``SkiffDomain/TextSearch/tokens(_:)`` of the text).
    package let terms: [String]
    package let statuses: Set<LostFoundStatus>
    /// The building key to filter by, if any.
    package let buildingKey: String?
    /// The cursor to continue after, if this is not the first page.
    package let cursor: LostFoundSearchEngine.Cursor?
    /// A hash of everything that defines the result list; page tokens carry it.
    package let fingerprint: String

    package init(_ query: LostFoundQuery, page: PageRequest) throws(DomainError) {
        self.query = query
        self.terms = TextSearch.tokens(query.text)
        self.statuses = query.filter.effectiveStatuses
        self.buildingKey = query.filter.building.map(LostFoundRules.buildingKey)
        var parts = [
            "q=" + terms.joined(separator: " "),
            "s=" + query.sort.rawValue,
            "st=" + statuses.map(\.rawValue).sorted().joined(separator: ","),
            "c=" + query.filter.categories.map(\.rawValue).sorted().joined(separator: ","),
            "b=" + (buildingKey ?? ""),
            "v=" + (query.viewerID ?? ""),
        ]
        if let near = query.filter.near {
            parts.append("n=\(near.center.latitude),\(near.center.longitude),\(near.radiusKm)")
        }
        self.fingerprint = LostFoundSearchEngine.hash(parts.joined(separator: "|"))
        if let token = page.token {
            let cursor = try PageToken.decode(
                token,
                as: LostFoundSearchEngine.Cursor.self,
                kind: LostFoundSearchEngine.kind
            )
            // A distance exactly when the order is by distance, and one a search can show.
            guard cursor.f == fingerprint, (cursor.d != nil) == (query.sort == .distance),
                cursor.d.map({ $0.isFinite && $0 >= 0 }) ?? true
            else { throw DomainError(.invalidArgument, PageToken.invalidMessage) }
            self.cursor = cursor
        } else {
            self.cursor = nil
        }
    }
}

/// Matching, ordering and paging of item search and of match lists.
package enum LostFoundSearchEngine {
    static let kind = "lostfound.search"
    static let matchesKind = "lostfound.matches"

    /// The position after a search result: the query's fingerprint, then the sort key.
    package struct Cursor: Codable, Hashable, Sendable {
        package var f: String
        /// Distance, for distance sort.
        package var d: Double?
        /// `createdAt` in milliseconds.
        package var c: Int64
        /// The item id.
        package var i: String
    }

    /// A matching item with its distance.
    package struct Hit: Sendable {
        package var item: LostFoundItem
        package var distanceKm: Double?
    }

    /// FNV-1a, 64 bits: short, stable across processes (unlike `Hasher`).
    static func hash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// The circle on the grid (``SkiffDomain/GridCircle``): its box, its cells and their bands of shown
    /// distance, as every backend reads them.
    package static func grid(_ circle: LostFoundCircle) -> GridCircle {
        GridCircle(latitude: circle.center.latitude, longitude: circle.center.longitude, radiusKm: circle.radiusKm)
    }

    /// A latitude/longitude box holding every exact point whose distance, exact or approximate, can be within
    /// the circle (``SkiffDomain/GridCircle/boundingBox``), for narrowing candidates by index. `longitude` is
    /// `nil` when the box would wrap.
    package static func boundingBox(
        _ circle: LostFoundCircle
    ) -> (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) {
        grid(circle).boundingBox
    }

    /// The words of an item that keywords match: ``SkiffDomain/TextSearch/tokens(_:)`` of its title, then of
    /// its description.
    package static func tokens(_ item: LostFoundItem) -> [String] {
        TextSearch.tokens(item.title) + TextSearch.tokens(item.fields.description)
    }

    /// The hit for an item if it matches every filter and keyword, else `nil`. `tokens` are the item's
    /// ``tokens(_:)`` when the caller keeps them; they are computed otherwise.
    package static func hit(_ item: LostFoundItem, _ query: CompiledLostFoundQuery, tokens: [String]? = nil) -> Hit? {
        let filter = query.query.filter
        guard query.statuses.contains(item.status) else { return nil }
        if !filter.categories.isEmpty, !filter.categories.contains(item.category) { return nil }
        if let key = query.buildingKey, item.fields.buildingKey != key { return nil }
        var distance: Double?
        if let near = filter.near {
            guard let point = item.point else { return nil }
            // Only the reporter measures to the exact point; anyone else to its cell, rounded
            // (``SkiffDomain/ApproximateLocation``), in the filter, the order and the result alike.
            let viewer = query.query.viewerID
            let km = ApproximateLocation.distance(
                from: (near.center.latitude, near.center.longitude),
                to: (point.latitude, point.longitude),
                exact: viewer != nil && viewer == item.reporterID
            )
            guard km.measured <= near.radiusKm else { return nil }
            distance = km.shown
        }
        if !query.terms.isEmpty {
            guard TextSearch.matches(tokens ?? Self.tokens(item), terms: query.terms) else { return nil }
        }
        return Hit(item: item, distanceKm: distance)
    }

    static func cursor(of hit: Hit, _ query: CompiledLostFoundQuery) -> Cursor {
        Cursor(
            f: query.fingerprint,
            d: query.query.sort == .distance ? (hit.distanceKm ?? 0) : nil,
            c: hit.item.createdAt.millisecondsSince1970,
            i: hit.item.id
        )
    }

    /// Whether key `a` comes before key `b` (ties: newest first, then id descending).
    static func precedes(_ a: Cursor, _ b: Cursor) -> Bool {
        if a.d != b.d { return (a.d ?? 0) < (b.d ?? 0) }
        if a.c != b.c { return a.c > b.c }
        return b.i.utf8.lexicographicallyPrecedes(a.i.utf8)
    }

    /// Orders hits, drops those up to the cursor and returns one page.
    package static func page(_ hits: [Hit], _ query: CompiledLostFoundQuery, size: Int) -> Page<LostFoundSearchHit> {
        // Keys and positions are sorted, not the hits (each a whole item): only the page's hits are copied.
        var keyed = hits.indices.map { (key: cursor(of: hits[$0], query), index: $0) }
        if let after = query.cursor { keyed.removeAll { !precedes(after, $0.key) } }
        keyed.sort { precedes($0.key, $1.key) }
        return makePage(keyed.prefix(size + 1).map { (key: $0.key, hit: hits[$0.index]) }, size: size)
    }

    /// Builds a page from up to `size + 1` hits already in order and after the cursor (a backend that
    /// ordered and paged them itself).
    package static func page(
        ordered hits: [Hit],
        _ query: CompiledLostFoundQuery,
        size: Int
    ) -> Page<LostFoundSearchHit> {
        makePage(hits.map { (key: cursor(of: $0, query), hit: $0) }, size: size)
    }

    private static func makePage(_ keyed: [(key: Cursor, hit: Hit)], size: Int) -> Page<LostFoundSearchHit> {
        let items = keyed.prefix(size).map { LostFoundSearchHit(item: $0.hit.item, distanceKm: $0.hit.distanceKm) }
        let next = keyed.count > size ? PageToken.encode(keyed[size - 1].key, kind: kind) : nil
        return Page(items: items, nextPageToken: next)
    }

    // MARK: A reporter's own items

    static let ownItemsKind = "lostfound.ownItems"

    /// The position after an item in a reporter's own items, newest first.
    package struct OwnItemsCursor: Codable, Hashable, Sendable {
        /// The reporter (a token is only valid for the same reporter).
        package var u: String
        /// The statuses asked for, sorted and joined (a token is only valid for the same ones).
        package var f: String
        /// The last item's `createdAt` in milliseconds.
        package var t: Int64
        /// The last item's id.
        package var i: String
    }

    /// The statuses key a cursor carries.
    package static func statusesKey(_ statuses: Set<LostFoundStatus>) -> String {
        statuses.map(\.rawValue).sorted().joined(separator: ",")
    }

    /// Decodes the cursor of a request for a reporter's own items, or `nil` for the first page.
    package static func ownItemsCursor(
        _ page: PageRequest,
        reporterID: String,
        statuses: Set<LostFoundStatus>
    ) throws(DomainError) -> OwnItemsCursor? {
        try PageToken.cursor(of: page, as: OwnItemsCursor.self, kind: ownItemsKind) {
            $0.u == reporterID && $0.f == statusesKey(statuses)
        }
    }

    /// One page of a reporter's own items from up to `size + 1` of them fetched in order.
    package static func ownItemsPage(
        _ fetched: [LostFoundOwnItem],
        size: Int,
        reporterID: String,
        statuses: Set<LostFoundStatus>
    ) -> Page<LostFoundOwnItem> {
        Page(fetched: fetched, size: size) { last in
            let cursor = OwnItemsCursor(
                u: reporterID,
                f: statusesKey(statuses),
                t: last.item.createdAt.millisecondsSince1970,
                i: last.item.id
            )
            return PageToken.encode(cursor, kind: ownItemsKind)
        }
    }

    // MARK: Matches

    /// The position after a match in an item's match list.
    package struct MatchCursor: Codable, Hashable, Sendable {
        /// The item whose matches are listed.
        package var s: String
        /// Score.
        package var r: Double
        /// `matchedAt` in milliseconds.
        package var t: Int64
        /// The candidate's id.
        package var i: String
    }

    package static func matchCursor(_ page: PageRequest, itemID: String) throws(DomainError) -> MatchCursor? {
        try PageToken.cursor(of: page, as: MatchCursor.self, kind: matchesKind) { $0.s == itemID }
    }

    static func key(_ hit: LostFoundMatchHit, itemID: String) -> MatchCursor {
        MatchCursor(s: itemID, r: hit.score, t: hit.matchedAt.millisecondsSince1970, i: hit.candidate.id)
    }

    /// Whether match key `a` comes before `b`: best score, then most recent, then candidate id descending.
    package static func precedes(_ a: MatchCursor, _ b: MatchCursor) -> Bool {
        if a.r != b.r { return a.r > b.r }
        if a.t != b.t { return a.t > b.t }
        return b.i.utf8.lexicographicallyPrecedes(a.i.utf8)
    }

    /// Orders match hits, drops those up to the cursor and returns one page.
    package static func matchesPage(
        _ hits: [LostFoundMatchHit],
        itemID: String,
        cursor: MatchCursor?,
        size: Int
    ) -> Page<LostFoundMatchHit> {
        var keyed = hits.map { (key: key($0, itemID: itemID), hit: $0) }
        if let cursor { keyed.removeAll { !precedes(cursor, $0.key) } }
        keyed.sort { precedes($0.key, $1.key) }
        let items = keyed.prefix(size).map(\.hit)
        let next = keyed.count > size ? PageToken.encode(keyed[size - 1].key, kind: matchesKind) : nil
        return Page(items: items, nextPageToken: next)
    }
}
