import Foundation
package import SkiffDomain

/// Defines nearby and trending results for every ``BucketListStore`` backend: matching, distances, scores,
/// order, paging, and the trending walk by stored bound (``trendingTop(_:next:score:)``). Backends answer
/// from their own indexes and use these functions for every decision, so they return the same results.
package enum ActivityRanking {
    static let nearbyKind = "bucketlist.nearby"

    /// The keyset cursor of a nearby page: the sort key of the last result, and the query it belongs to.
    package struct NearbyCursor: Codable, Hashable, Sendable {
        /// The query's fingerprint.
        var f: String
        /// Distance in kilometres.
        package var d: Double
        /// Net votes (popularity order only).
        package var n: Int?
        /// Activity id.
        package var i: String
    }

    static func fingerprint(_ query: NearbyQuery) -> String {
        "\(query.center.latitude),\(query.center.longitude),\(query.radiusKm),\(query.sort.rawValue)"
    }

    /// Decodes the page token of a nearby search (before any I/O, so a bad token fails fast).
    package static func nearbyCursor(_ page: PageRequest, _ query: NearbyQuery) throws(DomainError) -> NearbyCursor? {
        try PageToken.cursor(of: page, as: NearbyCursor.self, kind: nearbyKind) {
            $0.f == fingerprint(query) && (query.sort == .popularity) == ($0.n != nil)
        }
    }

    private static func key(_ hit: NearbyHit, _ query: NearbyQuery) -> NearbyCursor {
        NearbyCursor(
            f: fingerprint(query),
            d: hit.distanceKm,
            n: query.sort == .popularity ? hit.activity.netVotes : nil,
            i: hit.activity.id
        )
    }

    private static func precedes(_ a: NearbyCursor, _ b: NearbyCursor) -> Bool {
        if let left = a.n, let right = b.n, left != right { return left > right }
        if a.d != b.d { return a.d < b.d }
        return a.i.utf8.lexicographicallyPrecedes(b.i.utf8)
    }

    /// One page of nearby results from candidates (any superset of the matches, in any order): the
    /// definition every backend's walk must equal.
    package static func nearbyPage(
        _ candidates: [Activity],
        _ query: NearbyQuery,
        page: PageRequest
    ) throws(DomainError) -> Page<NearbyHit> {
        let cursor = try nearbyCursor(page, query)
        let hits = nearest(
            candidates,
            query,
            radiusKm: query.radiusKm,
            after: cursor,
            limit: page.size + 1,
            byPopularity: query.sort == .popularity
        )
        return nearbyPage(ordered: hits, query, size: page.size)
    }

    /// One nearby page from up to `size + 1` hits a backend already filtered, ordered and paged after the
    /// cursor (SQLite, in SQL).
    package static func nearbyPage(ordered hits: [NearbyHit], _ query: NearbyQuery, size: Int) -> Page<NearbyHit> {
        let items = Array(hits.prefix(size))
        let next = hits.count > size ? PageToken.encode(key(hits[size - 1], query), kind: nearbyKind) : nil
        return Page(items: items, nextPageToken: next)
    }

    /// How many activities a circle's box may hold for a nearby page, or trending near a point, to read
    /// them all. Past it, nearby walks outwards from the center (``nearbyWalk(_:cursor:size:collectLimit:count:fetch:levelBelow:)``)
    /// and trending walks every activity by its stored bound, checking the circle.
    package static let collectLimit = 256

    /// The smallest radius the nearby walk shrinks to (1 m): activities stacked on one spot are read whole.
    static let minimumWalkRadiusKm = 0.001

    /// One nearby page whose cost grows with the page, not with the activities in the circle.
    ///
    /// When the circle's box holds fewer than `collectLimit` activities, one `fetch` over the whole circle
    /// answers. Otherwise the walk goes outwards: it shrinks a radius (by 4) while its box still holds
    /// `collectLimit` activities or more, then fetches the nearest hits within it and doubles it until the
    /// page is full or the radius reaches the query's. Hits within a radius are exactly the nearest ones,
    /// so the result equals ordering every activity in the circle. The popularity order does this per
    /// net-vote level, highest first (`levelBelow`), each level in distance order. A later page starts
    /// from the cursor's distance (and level), so it reads the activities nearer than the cursor again:
    /// its cost grows with the results before it in the same level.
    ///
    /// - Parameters:
    ///   - cursor: The decoded page token (``nearbyCursor(_:_:)``).
    ///   - count: Activities in a radius's bounding box (at a net-vote level, or all for `nil`), counted up
    ///     to a cap (returning the cap or more means "at least").
    ///   - fetch: Hits within a radius (exact distance) at a level (`nil`: all, in the query's order;
    ///     a level: nearest first, then by id), after a cursor, at most `limit`.
    ///   - levelBelow: The highest net-vote level any activity has below a level (`nil`: the highest).
    package static func nearbyWalk(
        _ query: NearbyQuery,
        cursor: NearbyCursor?,
        size: Int,
        collectLimit: Int = collectLimit,
        count: (_ level: Int?, _ radiusKm: Double, _ cap: Int) throws -> Int,
        fetch: (_ level: Int?, _ radiusKm: Double, _ after: NearbyCursor?, _ limit: Int) throws -> [NearbyHit],
        levelBelow: (_ level: Int?) throws -> Int?
    ) rethrows -> Page<NearbyHit> {
        let want = size + 1
        let radius = query.radiusKm
        guard try count(nil, radius, collectLimit) >= collectLimit else {
            return nearbyPage(ordered: try fetch(nil, radius, cursor, want), query, size: size)
        }
        func nearest(_ level: Int?, after: NearbyCursor?, limit: Int, fullBoxCounted: Bool) throws -> [NearbyHit] {
            let floor = after?.d ?? 0
            var current = radius
            var counted = fullBoxCounted
            while current / 4 > floor, current / 4 >= minimumWalkRadiusKm {
                if !counted, try count(level, current, collectLimit) < collectLimit { break }
                counted = false
                current /= 4
            }
            while true {
                let hits = try fetch(level, current, after, limit)
                if hits.count >= limit || current >= radius { return hits }
                current = min(radius, current * 2)
            }
        }
        var hits: [NearbyHit] = []
        switch query.sort {
        case .distance:
            hits = try nearest(nil, after: cursor, limit: want, fullBoxCounted: true)
        case .popularity:
            var level = try cursor?.n ?? levelBelow(nil)
            var after = cursor
            while let current = level, hits.count < want {
                hits += try nearest(current, after: after, limit: want - hits.count, fullBoxCounted: false)
                after = nil
                level = try levelBelow(current)
            }
        }
        return nearbyPage(ordered: hits, query, size: size)
    }

    /// Up to `limit` hits among `candidates` (any superset): within `radiusKm` of the query's center (and
    /// within its radius), after `after`, in the query's order (`byPopularity`) or nearest first — the
    /// in-memory `fetch` of ``nearbyWalk(_:cursor:size:collectLimit:count:fetch:levelBelow:)``.
    package static func nearest(
        _ candidates: some Sequence<Activity>,
        _ query: NearbyQuery,
        radiusKm: Double,
        after: NearbyCursor?,
        limit: Int,
        byPopularity: Bool = false
    ) -> [NearbyHit] {
        let radius = min(radiusKm, query.radiusKm)
        let start = after.map { NearbyCursor(f: "", d: $0.d, n: byPopularity ? $0.n : nil, i: $0.i) }
        var keyed: [(key: NearbyCursor, hit: NearbyHit)] = []
        for activity in candidates {
            let distance = Geo.distanceKm(query.center, activity.fields.place.point)
            guard distance <= radius else { continue }
            let key = NearbyCursor(f: "", d: distance, n: byPopularity ? activity.netVotes : nil, i: activity.id)
            if let start, !precedes(start, key) { continue }
            keyed.append((key, NearbyHit(activity: activity, distanceKm: distance)))
        }
        keyed.sort { precedes($0.key, $1.key) }
        return keyed.prefix(limit).map(\.hit)
    }

    /// Whether trending hit `a` ranks before `b`: higher score, then newer activity, then id.
    package static func ranksBefore(_ lhs: TrendingHit, _ rhs: TrendingHit) -> Bool {
        if lhs.score != rhs.score { return lhs.score > rhs.score }
        let (left, right) = (lhs.activity.createdAt.millisecondsSince1970, rhs.activity.createdAt.millisecondsSince1970)
        if left != right { return left > right }
        return lhs.activity.id.utf8.lexicographicallyPrecedes(rhs.activity.id.utf8)
    }

    /// The trending results, computed from activities walked by their stored bound (highest first): exact
    /// scores (``trendingHit(_:votes:_:)``) only until no activity left can beat the `limit` results held
    /// (see ``TrendingScore/raisedBound(_:upVoteAt:)``). Equal to ``trending(_:_:)`` over every activity.
    ///
    /// - Parameters:
    ///   - next: The next batch of activities in descending bound order, with their bounds; empty at the end.
    ///   - score: The exact hits of a batch (its activities within the circle and with a positive score).
    package static func trendingTop(
        _ query: TrendingQuery,
        next: () throws -> [(id: String, bound: Double)],
        score: ([String]) throws -> [TrendingHit]
    ) rethrows -> [TrendingHit] {
        var top: [TrendingHit] = []
        while true {
            let batch = try next()
            guard !batch.isEmpty else { break }
            // Stop before a batch whose best bound cannot reach the weakest held result.
            if top.count >= query.limit, let weakest = top.last,
                TrendingScore.maximumScore(bound: batch[0].bound, now: query.now) < weakest.score
            {
                break
            }
            for hit in try score(batch.map(\.id)) {
                let index = top.firstIndex { ranksBefore(hit, $0) } ?? top.count
                guard index < query.limit else { continue }
                top.insert(hit, at: index)
                if top.count > query.limit { top.removeLast() }
            }
        }
        return top
    }

    /// The trending hit of an activity from its votes, or `nil` when it lies outside the query's circle or
    /// its score is not positive.
    package static func trendingHit(_ activity: Activity, votes: [CastVote], _ query: TrendingQuery) -> TrendingHit? {
        var distance = 0.0
        if let center = query.center {
            distance = Geo.distanceKm(center, activity.fields.place.point)
            guard distance <= query.radiusKm else { return nil }
        }
        let since = query.since.millisecondsSince1970
        let score = TrendingScore.score(votes.filter { $0.castAt.millisecondsSince1970 >= since }, now: query.now)
        guard score > 0 else { return nil }
        return TrendingHit(activity: activity, score: score, distanceKm: distance)
    }

    /// The trending results from candidate activities and their votes cast since `query.since`.
    package static func trending(
        _ candidates: [(activity: Activity, votes: [CastVote])],
        _ query: TrendingQuery
    )
        -> [TrendingHit]
    {
        let hits = candidates.compactMap { trendingHit($0.activity, votes: $0.votes, query) }.sorted(by: ranksBefore)
        return Array(hits.prefix(query.limit))
    }
}
