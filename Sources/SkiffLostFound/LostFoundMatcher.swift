public import Foundation
import SkiffDomain

/// Scores how likely a found item is someone's lost item: a pure function of the two items.
///
/// ## The formula
///
/// Two items are **candidates** only if all of these hold (hard filters, score `nil` otherwise):
/// - one is lost and the other found, both still open (not returned), reported by different people;
/// - they have the same category;
/// - they share at least one keyword (see below);
/// - when both have a point, they are at most ``maximumDistanceKm`` (5 km) apart;
/// - their `occurredAt` are at most ``maximumTimeGapDays`` (30 days) apart.
///
/// A candidate's score, from 0 to 1, is
///
/// ```
/// score = 0.6 · K + 0.2 · D + 0.2 · T
/// K = |A ∩ B| / |A ∪ B|                  (Jaccard similarity of the keyword sets)
/// D = exp(−distanceKm / 1 km)             when both items have a point (distance between the centres
///                                         of their ~1.1 km grid cells, never the exact points),
///   = 1 if same building, else 0.3        otherwise (``sameBuildingCloseness``, ``unknownCloseness``)
/// T = exp(−|days between occurredAt| / 7)
/// ```
///
/// where a keyword set is the distinct tokens (``SkiffDomain/TextSearch``: case, accents and width folded)
/// of title and description, without ``stopWords`` and one-character tokens. The score is rounded to 4
/// decimals; a pair is a **match** when its score is at least ``threshold`` (0.5).
///
/// Reporting an item scores at most ``maximumCandidates`` (500) of its candidates: those whose `occurredAt` is
/// latest (ties: the greater id), among the open items of the other kind in the same category, reported by
/// someone else, sharing a keyword, within the time window and (when the new item has a point) without a
/// point or within the distance limit's box. So one report costs a bounded amount of work however many
/// similar items exist; in a real campus far fewer than 500 items compete for one match.
///
/// For example "Blue Hydro Flask bottle" lost and "Found a blue bottle" found 200 m apart in the same grid
/// cell and one day apart: K = 2/4, D = 1, T = 0.87, score = 0.3 + 0.2 + 0.173 = 0.673, a match. With only one word of ten in
/// common and everything else perfect, the score is 0.06 + 0.2 + 0.2 = 0.46: no match.
public struct LostFoundMatcher: Hashable, Sendable {
    /// The weight of keyword overlap.
    public var keywordWeight = 0.6
    /// The weight of closeness in space.
    public var distanceWeight = 0.2
    /// The weight of closeness in time.
    public var timeWeight = 0.2
    /// The lowest score that counts as a match.
    public var threshold = 0.5
    /// The distance at which closeness falls to 1/e, in kilometres.
    public var distanceScaleKm = 1.0
    /// Items farther apart than this never match, in kilometres.
    public var maximumDistanceKm = 5.0
    /// The time gap at which time proximity falls to 1/e, in days.
    public var timeScaleDays = 7.0
    /// Items lost and found farther apart in time than this never match, in days.
    public var maximumTimeGapDays = 30.0
    /// Closeness when the items lack a point but name the same building.
    public var sameBuildingCloseness = 1.0
    /// Closeness when the items lack a point and name different buildings.
    public var unknownCloseness = 0.3
    /// The most candidates one report scores (the latest to occur; see above).
    public var maximumCandidates = 500

    /// The standard matcher, with the weights documented above.
    public static let standard = LostFoundMatcher()

    public init() {}

    /// Words too common to say anything about an item.
    public static let stopWords: Set<String> = [
        "a", "an", "and", "are", "at", "by", "for", "found", "from", "has", "have", "i", "in", "is", "it", "its",
        "lost", "me", "my", "near", "of", "on", "or", "the", "this", "that", "to", "was", "with",
    ]

    /// The keyword set of an item: distinct folded tokens of title and description, without stop words
    /// and one-character tokens.
    public static func keywords(_ fields: LostFoundItemFields) -> Set<String> {
        Set(
            (TextSearch.tokens(fields.title) + TextSearch.tokens(fields.description)).filter {
                $0.count > 1 && !stopWords.contains($0)
            }
        )
    }

    /// The score of a pair, or `nil` when a hard filter rules it out (see the type's documentation).
    /// Symmetric: `score(a, b) == score(b, a)`.
    public func score(_ a: LostFoundItem, _ b: LostFoundItem) -> LostFoundMatchScore? {
        let left = Self.keywords(a.fields)
        let right = Self.keywords(b.fields)
        let shared = left.intersection(right).count
        return score(a, b, sharedKeywords: shared, allKeywords: left.count + right.count - shared)
    }

    /// The score of a pair whose keyword sets share `sharedKeywords` of their `allKeywords` distinct
    /// keywords (|A ∩ B| and |A ∪ B|), which a backend may count from keywords it keeps per item;
    /// ``score(_:_:)`` counts them from the items' text.
    package func score(
        _ a: LostFoundItem,
        _ b: LostFoundItem,
        sharedKeywords shared: Int,
        allKeywords all: Int
    ) -> LostFoundMatchScore? {
        guard a.kind != b.kind, a.isOpen, b.isOpen, a.reporterID != b.reporterID, a.category == b.category else {
            return nil
        }
        let gapDays = abs(a.occurredAt.timeIntervalSince(b.occurredAt)) / 86_400
        guard gapDays <= maximumTimeGapDays else { return nil }
        var distanceKm: Double?
        let closeness: Double
        if let p = a.point, let q = b.point {
            // Between the two items' grid cells, never their exact points: the score, the distance and
            // whether the pair matches at all are shown to the other item's reporter, who could otherwise
            // place items to recover a point (see ``SkiffDomain/ApproximateLocation``).
            let km = p.approximate.distanceKm(to: q.approximate)
            guard km <= maximumDistanceKm else { return nil }
            distanceKm = km
            closeness = exp(-km / distanceScaleKm)
        } else {
            closeness = a.fields.buildingKey == b.fields.buildingKey ? sameBuildingCloseness : unknownCloseness
        }
        guard shared > 0 else { return nil }
        let keyword = Double(shared) / Double(all)
        let time = exp(-gapDays / timeScaleDays)
        let total = keywordWeight * keyword + distanceWeight * closeness + timeWeight * time
        return LostFoundMatchScore(
            keyword: keyword,
            closeness: closeness,
            time: time,
            total: (total * 10_000).rounded() / 10_000,
            distanceKm: distanceKm
        )
    }

    /// A stored item to score against a new one, with the two items' keyword counts (see
    /// ``score(_:_:sharedKeywords:allKeywords:)``).
    package struct Candidate: Sendable {
        package var item: LostFoundItem
        package var sharedKeywords: Int
        package var allKeywords: Int

        package init(item: LostFoundItem, sharedKeywords: Int, allKeywords: Int) {
            self.item = item
            self.sharedKeywords = sharedKeywords
            self.allKeywords = allKeywords
        }
    }

    /// The matches of a newly reported `item` among `candidates` (scored at or above ``threshold``),
    /// best first, then by candidate id.
    public func matches(for item: LostFoundItem, among candidates: [LostFoundItem], at now: Date) -> [LostFoundMatch] {
        let own = Self.keywords(item.fields)
        let counted = candidates.map { candidate in
            let theirs = Self.keywords(candidate.fields)
            let shared = own.intersection(theirs).count
            return Candidate(item: candidate, sharedKeywords: shared, allKeywords: own.count + theirs.count - shared)
        }
        return matches(for: item, among: counted, at: now)
    }

    /// ``matches(for:among:at:)`` for candidates whose keyword counts are known.
    package func matches(for item: LostFoundItem, among candidates: [Candidate], at now: Date) -> [LostFoundMatch] {
        candidates.compactMap { counted -> LostFoundMatch? in
            let candidate = counted.item
            guard
                let score = score(
                    item,
                    candidate,
                    sharedKeywords: counted.sharedKeywords,
                    allKeywords: counted.allKeywords
                ),
                score.total >= threshold
            else { return nil }
            let (found, lost) = item.kind == .found ? (item, candidate) : (candidate, item)
            return LostFoundMatch(
                foundItemID: found.id,
                lostItemID: lost.id,
                score: score.total,
                distanceKm: score.distanceKm,
                matchedAt: now.roundedToMilliseconds
            )
        }
        .sorted { $0.score != $1.score ? $0.score > $1.score : $0.candidateKey(for: item) < $1.candidateKey(for: item) }
    }
}

/// The parts of a pair's score (see ``LostFoundMatcher``).
public struct LostFoundMatchScore: Hashable, Sendable {
    /// Keyword overlap K, 0…1.
    public var keyword: Double
    /// Closeness in space D, 0…1.
    public var closeness: Double
    /// Proximity in time T, 0…1.
    public var time: Double
    /// The weighted sum, rounded to 4 decimals.
    public var total: Double
    /// The distance between the two points, when both items have one.
    public var distanceKm: Double?
}

/// A recorded match between a found item and a lost item.
public struct LostFoundMatch: Hashable, Sendable {
    public var foundItemID: String
    public var lostItemID: String
    /// The score, at least the matcher's threshold.
    public var score: Double
    /// The distance between the items, when both have a point.
    public var distanceKm: Double?
    /// When the match was recorded (millisecond precision).
    public var matchedAt: Date

    public init(foundItemID: String, lostItemID: String, score: Double, distanceKm: Double?, matchedAt: Date) {
        self.foundItemID = foundItemID
        self.lostItemID = lostItemID
        self.score = score
        self.distanceKm = distanceKm
        self.matchedAt = matchedAt
    }

    /// The id of the other item of the pair, seen from `item`.
    func candidateKey(for item: LostFoundItem) -> String {
        item.kind == .found ? lostItemID : foundItemID
    }
}

extension LostFoundMatcher {
    /// The time window, in milliseconds either side of an item's `occurredAt`, in which candidates lie
    /// (one millisecond wider than ``maximumTimeGapDays``, which the score checks exactly).
    package var candidateWindowMilliseconds: Int64 { Int64(maximumTimeGapDays * 86_400_000) + 1 }

    /// The box around a point in which candidates with a point lie: the distance limit widened by a grid
    /// cell's shift at both ends (the score measures between grid cells), or `nil` without a point.
    package func candidateBox(
        _ item: LostFoundItem
    ) -> (latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?)? {
        guard let point = item.point else { return nil }
        let box = GreatCircle.boundingBox(
            latitude: point.latitude,
            longitude: point.longitude,
            radiusKm: maximumDistanceKm + 2 * ApproximateLocation.maximumShiftKm
        )
        return (box.latitude, box.longitude)
    }

    /// Whether `candidate` comes before `other` in the order candidates are taken: latest `occurredAt`
    /// first, then the greater id (UTF-8 order).
    package static func takenBefore(_ candidate: LostFoundItem, _ other: LostFoundItem) -> Bool {
        let a = candidate.occurredAt.millisecondsSince1970
        let b = other.occurredAt.millisecondsSince1970
        return a != b ? a > b : other.id.utf8.lexicographicallyPrecedes(candidate.id.utf8)
    }
}
