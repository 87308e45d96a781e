public import Foundation
import PostgresNIO
public import SkiffBucketList
public import SkiffDomain

// Nearby and trending on PostgreSQL. Both run the walks of `ActivityRanking` (the code that decides the
// in-memory and SQLite results), each step of which is one query in one snapshot: a box counted on an
// index up to a cap, the nearest hits within a radius (exact distance, order, cursor and LIMIT in SQL),
// the next net-vote level, the next 64 activities by trending bound, or a batch's exact scores.
//
// The walks are synchronous functions and a query here is asynchronous, so a walk is replayed
// (`BucketListReplay`): run until it asks for an answer not yet known, which it throws; the query runs,
// its answer is recorded, and the walk runs again from the start, answered from the record up to there.
// A walk is a pure function of its answers, so every run asks the same questions in the same order and
// the last run's result is the walk's. Each step is queried once; a replay costs only the walk's own
// arithmetic over answers already in memory.
extension PostgresBucketListStore {
    // MARK: Nearby

    /// A step of a nearby walk (see ``SkiffBucketList/ActivityRanking/nearbyWalk(_:cursor:size:collectLimit:count:fetch:levelBelow:)``).
    enum NearbyStep: Hashable, Sendable {
        case count(level: Int?, radiusKm: Double, cap: Int)
        case fetch(level: Int?, radiusKm: Double, after: ActivityRanking.NearbyCursor?, limit: Int)
        case levelBelow(Int?)
    }

    /// The answer to a ``NearbyStep``.
    enum NearbyAnswer: Sendable {
        case count(Int)
        case hits([NearbyHit])
        case level(Int?)
    }

    public func nearbyActivities(_ query: NearbyQuery, page: PageRequest) async throws -> Page<NearbyHit> {
        let cursor = try ActivityRanking.nearbyCursor(page, query)
        return try await storage.read { db in
            try await BucketListReplay.run { (ask: (NearbyStep) throws -> NearbyAnswer) in
                try ActivityRanking.nearbyWalk(query, cursor: cursor, size: page.size, collectLimit: collectLimit) {
                    level,
                    radius,
                    cap in
                    guard case .count(let count) = try ask(.count(level: level, radiusKm: radius, cap: cap)) else {
                        throw BucketListReplay.mismatch
                    }
                    return count
                } fetch: { level, radius, after, limit in
                    let step = NearbyStep.fetch(level: level, radiusKm: radius, after: after, limit: limit)
                    guard case .hits(let hits) = try ask(step) else { throw BucketListReplay.mismatch }
                    return hits
                } levelBelow: { level in
                    guard case .level(let below) = try ask(.levelBelow(level)) else { throw BucketListReplay.mismatch }
                    return below
                }
            } answer: { step in
                switch step {
                case .count(let level, let radius, let cap):
                    let counted = Self.nearbyCount(query.center, radiusKm: radius, level: level, cap: cap)
                    return .count(try await db.count(counted, storage))
                case .fetch(let level, let radius, let after, let limit):
                    return .hits(
                        try await nearbyHits(db, query, level: level, radiusKm: radius, after: after, limit: limit)
                    )
                case .levelBelow(let level):
                    return .level(try await netLevel(db, below: level))
                }
            }
        }
    }

    /// How many activities a circle's box holds (at a net-vote level), counted up to `cap`: on the GiST
    /// index of the points, or for a level on `activity_net_place`.
    static func nearbyCount(_ center: Coordinate, radiusKm: Double, level: Int?, cap: Int) -> PostgresQuery {
        var builder = PostgresQueryBuilder("SELECT count(*) FROM (SELECT 1 FROM activity a WHERE ")
        let box = boxCondition(center, radiusKm: radiusKm, level: level, &builder)
        builder.append(box)
        let cap = builder.bind(cap)
        builder.append(" LIMIT \(cap)) AS boxed")
        return builder.query
    }

    /// One step of a nearby walk in one statement: the box of `radiusKm` (at most the query's) on an
    /// index (``nearbyCount(_:radiusKm:level:cap:)``), the exact distance (`activity_distance_km`) as
    /// filter and order, the keyset cursor and the limit. Without a level the order is the query's; at a
    /// level, nearest first. The conditions are SQLite's (`SQLiteBucketListStore.nearbyStatement`).
    static func nearbyQuery(
        _ query: NearbyQuery,
        level: Int?,
        radiusKm: Double,
        after cursor: ActivityRanking.NearbyCursor?,
        limit: Int
    ) -> PostgresQuery {
        let radius = min(radiusKm, query.radiusKm)
        var builder = PostgresQueryBuilder("")
        let latitude = builder.bind(query.center.latitude)
        let longitude = builder.bind(query.center.longitude)
        let distance = "activity_distance_km(a.latitude, a.longitude, \(latitude), \(longitude))"
        builder.append(
            """
            SELECT \(PostgresBucketListRows.activityColumns), \(distance) AS distance_km
            FROM activity a WHERE
            """
        )
        let box = boxCondition(query.center, radiusKm: radius, level: level, &builder)
        let within = builder.bind(radius)
        builder.append(" \(box) AND \(distance) <= \(within)")
        let byPopularity = level == nil && query.sort == .popularity
        if let cursor {
            // After the cursor in (net votes desc,) distance asc, id asc.
            let last = builder.bind(cursor.d)
            let id = builder.bind(cursor.i)
            let byDistance = "(\(distance) > \(last) OR (\(distance) = \(last) AND a.id > \(id)))"
            if byPopularity, let net = cursor.n {
                let level = builder.bind(net)
                builder.append(" AND (a.net < \(level) OR (a.net = \(level) AND \(byDistance)))")
            } else {
                builder.append(" AND \(byDistance)")
            }
        }
        let order = byPopularity ? "a.net DESC, distance_km, a.id" : "distance_km, a.id"
        let count = builder.bind(limit)
        builder.append(" ORDER BY \(order) LIMIT \(count)")
        return builder.query
    }

    /// The hits of ``nearbyQuery(_:level:radiusKm:after:limit:)``.
    private func nearbyHits(
        _ db: PostgresConnection,
        _ query: NearbyQuery,
        level: Int?,
        radiusKm: Double,
        after: ActivityRanking.NearbyCursor?,
        limit: Int
    ) async throws -> [NearbyHit] {
        let rows = try await db.run(
            Self.nearbyQuery(query, level: level, radiusKm: radiusKm, after: after, limit: limit),
            storage
        )
        var hits: [NearbyHit] = []
        for try await row in rows {
            let row = row.makeRandomAccess()
            hits.append(
                NearbyHit(
                    activity: try PostgresBucketListRows.activity(row),
                    distanceKm: try row[PostgresBucketListRows.activityColumnCount].decode(Double.self)
                )
            )
        }
        return hits
    }

    /// The highest net-vote level of any activity below `level` (`nil`: the highest), on
    /// `activity_net_place`.
    private func netLevel(_ db: PostgresConnection, below level: Int?) async throws -> Int? {
        let rows =
            if let level {
                try await db.run("SELECT net FROM activity WHERE net < \(level) ORDER BY net DESC LIMIT 1", storage)
            } else {
                try await db.run("SELECT net FROM activity ORDER BY net DESC LIMIT 1", storage)
            }
        for try await net in rows.decode(Int.self) { return net }
        return nil
    }

    /// The box of a circle as a condition on `a`: on its point (``boxByPoint(_:radiusKm:_:)``), or at a
    /// net-vote level on `activity_net_place`.
    static func boxCondition(
        _ center: Coordinate,
        radiusKm: Double,
        level: Int?,
        _ builder: inout PostgresQueryBuilder
    ) -> String {
        guard let level else { return boxByPoint(center, radiusKm: radiusKm, &builder) }
        let net = builder.bind(level)
        return "a.net = \(net) AND " + boxByColumns(center, radiusKm: radiusKm, &builder)
    }

    /// The box of a circle (``SkiffBucketList/Geo/boundingBox(center:radiusKm:)``) as a condition on the
    /// point of `a`, which the GiST index `activity_place` answers; a box the longitudes cannot narrow
    /// (across the antimeridian or at a pole) spans every longitude.
    static func boxByPoint(_ center: Coordinate, radiusKm: Double, _ builder: inout PostgresQueryBuilder) -> String {
        let box = Geo.boundingBox(center: center, radiusKm: radiusKm)
        let longitude = box.longitude ?? -180...180
        let (west, south) = (builder.bind(longitude.lowerBound), builder.bind(box.latitude.lowerBound))
        let (east, north) = (builder.bind(longitude.upperBound), builder.bind(box.latitude.upperBound))
        return "point(a.longitude, a.latitude) <@ box(point(\(west), \(south)), point(\(east), \(north)))"
    }

    /// The box of a circle as ranges of `a.latitude` and `a.longitude` (the columns of
    /// `activity_net_place` and those `activity_trend_walk` carries).
    static func boxByColumns(_ center: Coordinate, radiusKm: Double, _ builder: inout PostgresQueryBuilder) -> String {
        let box = Geo.boundingBox(center: center, radiusKm: radiusKm)
        let (south, north) = (builder.bind(box.latitude.lowerBound), builder.bind(box.latitude.upperBound))
        var condition = "a.latitude BETWEEN \(south) AND \(north)"
        if let longitude = box.longitude {
            let (west, east) = (builder.bind(longitude.lowerBound), builder.bind(longitude.upperBound))
            condition += " AND a.longitude BETWEEN \(west) AND \(east)"
        }
        return condition
    }

    // MARK: Trending

    /// A step of a trending walk (see ``SkiffBucketList/ActivityRanking/trendingTop(_:next:score:)``).
    enum TrendingStep: Hashable, Sendable {
        /// The batch after `count` batches.
        case next(count: Int)
        /// The exact hits of these activities.
        case score([String])
    }

    /// The answer to a ``TrendingStep``.
    enum TrendingAnswer: Sendable {
        case batch([BucketListTrendCandidate])
        case hits([TrendingHit])
    }

    /// Trending: activities walked by their stored bound, 64 at a time on `activity_trend_walk` (which
    /// checks a circle's box in the index), scored exactly from their votes in the window until no
    /// activity left can enter the top (`ActivityRanking.trendingTop`). Near a point whose box holds
    /// fewer than ``SkiffBucketList/ActivityRanking/collectLimit`` activities, only those are walked
    /// (read on the GiST index, sorted by bound), as on SQLite.
    public func trendingActivities(_ query: TrendingQuery) async throws -> [TrendingHit] {
        try await storage.read { db in
            var inCircle: [BucketListTrendCandidate]?
            if let center = query.center {
                let counted = Self.nearbyCount(center, radiusKm: query.radiusKm, level: nil, cap: collectLimit)
                if try await db.count(counted, storage) < collectLimit {
                    var builder = PostgresQueryBuilder("SELECT a.id, a.trend_bound FROM activity a WHERE ")
                    let box = Self.boxByPoint(center, radiusKm: query.radiusKm, &builder)
                    builder.append(box + " AND a.trend_bound IS NOT NULL ORDER BY a.trend_bound DESC, a.id")
                    inCircle = try await Self.candidates(db.run(builder.query, storage))
                }
            }
            var walkedBatches = 0
            var last: BucketListTrendCandidate?
            return try await BucketListReplay.run { (ask: (TrendingStep) throws -> TrendingAnswer) in
                var batches = 0
                return try ActivityRanking.trendingTop(query) {
                    guard case .batch(let batch) = try ask(.next(count: batches)) else {
                        throw BucketListReplay.mismatch
                    }
                    batches += 1
                    return batch.map { (id: $0.id, bound: $0.bound) }
                } score: { ids in
                    guard case .hits(let hits) = try ask(.score(ids)) else { throw BucketListReplay.mismatch }
                    return hits
                }
            } answer: { step in
                switch step {
                case .next(let count):
                    if let inCircle {
                        let start = min(count * Self.trendBatch, inCircle.count)
                        return .batch(Array(inCircle[start..<min(start + Self.trendBatch, inCircle.count)]))
                    }
                    // Batches are asked for in order, each once: `last` ends the one before.
                    guard count == walkedBatches else { throw BucketListReplay.mismatch }
                    let batch = try await Self.candidates(
                        db.run(Self.trendWalk(center: query.center, radiusKm: query.radiusKm, after: last), storage)
                    )
                    walkedBatches += 1
                    last = batch.last ?? last
                    return .batch(batch)
                case .score(let ids):
                    return .hits(try await trendingHits(db, ids, query))
                }
            }
        }
    }

    /// The activities walked per batch.
    static let trendBatch = 64

    /// The next ``trendBatch`` activities with a trending bound after `after`, highest bound first then
    /// by id, on `activity_trend_walk`; near a point, only those in the circle's box (checked on the
    /// coordinates the index carries).
    static func trendWalk(center: Coordinate?, radiusKm: Double, after: BucketListTrendCandidate?) -> PostgresQuery {
        var builder = PostgresQueryBuilder("SELECT a.id, a.trend_bound FROM activity a WHERE a.trend_bound IS NOT NULL")
        if let center {
            let box = boxByColumns(center, radiusKm: radiusKm, &builder)
            builder.append(" AND " + box)
        }
        if let after {
            // The bound alone first, so the index is entered at it; the id orders equal bounds.
            let bound = builder.bind(after.bound)
            let id = builder.bind(after.id)
            builder.append(
                " AND a.trend_bound <= \(bound) AND (a.trend_bound < \(bound) OR (a.trend_bound = \(bound) AND a.id > \(id)))"
            )
        }
        builder.append(" ORDER BY a.trend_bound DESC, a.id LIMIT \(trendBatch)")
        return builder.query
    }

    private static func candidates(_ rows: PostgresRowSequence) async throws -> [BucketListTrendCandidate] {
        var candidates: [BucketListTrendCandidate] = []
        for try await (id, bound) in rows.decode((String, Double).self) {
            candidates.append(BucketListTrendCandidate(id: id, bound: bound))
        }
        return candidates
    }

    /// The exact trending hits of a batch: the activities and their votes in the window, scored by
    /// `ActivityRanking.trendingHit`.
    private func trendingHits(
        _ db: PostgresConnection,
        _ ids: [String],
        _ query: TrendingQuery
    ) async throws
        -> [TrendingHit]
    {
        let activities = try await PostgresBucketListRows.activities(
            db.run(
                """
                SELECT \(unescaped: PostgresBucketListRows.activityColumns) FROM activity a
                WHERE a.id = ANY(\(ids)::text[])
                """,
                storage
            )
        )
        var votes: [String: [CastVote]] = [:]
        let rows = try await db.run(
            """
            SELECT activity_id, user_id, value, cast_at FROM activity_vote
            WHERE activity_id = ANY(\(ids)::text[]) AND cast_at >= \(query.since.millisecondsSince1970)
            """,
            storage
        )
        for try await (activityID, userID, value, castAt) in rows.decode((String, String, Int, Int64).self) {
            votes[activityID, default: []].append(
                CastVote(userID: userID, vote: value > 0 ? .up : .down, castAt: Date(millisecondsSince1970: castAt))
            )
        }
        return activities.compactMap { ActivityRanking.trendingHit($0, votes: votes[$0.id] ?? [], query) }
    }
}

/// An activity in a trending walk: its id and stored bound.
struct BucketListTrendCandidate: Hashable, Sendable {
    var id: String
    var bound: Double
}

/// Runs a synchronous walk whose steps need asynchronous queries, by replaying it (see
/// `PostgresBucketListStore+Ranking.swift`).
enum BucketListReplay {
    /// Thrown by a step whose answer is not recorded yet.
    struct Pending<Step: Sendable>: Error {
        var step: Step
    }

    /// A replayed walk asked something other than what it asked before at the same point: it is not a
    /// pure function of its answers.
    static let mismatch = Mismatch()

    /// The error of ``mismatch``: an internal failure.
    struct Mismatch: Error, CustomStringConvertible {
        var description: String { "a nearby or trending walk did not repeat itself when replayed" }
    }

    /// Runs `walk` until it returns, answering each step it asks (through the function it is given)
    /// with `answer`, once per step: a step not answered yet stops the run, is answered and recorded,
    /// and `walk` runs again.
    static func run<Step: Hashable & Sendable, Answer, Result>(
        _ walk: ((Step) throws -> Answer) throws -> Result,
        answer: (Step) async throws -> Answer
    ) async throws -> Result {
        var record: [(step: Step, answer: Answer)] = []
        while true {
            var position = 0
            do {
                return try walk { step in
                    defer { position += 1 }
                    guard position < record.count else { throw Pending(step: step) }
                    guard record[position].step == step else { throw mismatch }
                    return record[position].answer
                }
            } catch let pending as Pending<Step> {
                guard position == record.count + 1 else { throw mismatch }
                record.append((pending.step, try await answer(pending.step)))
            }
        }
    }
}
