import Foundation
import SkiffDomain
import Testing

@testable import SkiffListings

@Suite("The search fingerprint that page tokens carry")
struct SearchFingerprintTests {
    /// The fingerprint as first defined: FNV-1a (64 bits) of these parts joined by `|`. Tokens made by
    /// earlier versions carry it, so the implementation must keep giving exactly this.
    static func reference(_ query: ListingQuery) -> String {
        let filter = query.filter
        var parts: [String] = [
            "q=" + SearchText.tokens(query.text).joined(separator: " "),
            "s=" + query.sort.rawValue,
            "v=" + (query.viewerID ?? ""),
            "d=\(query.postedWithinDays)",
            "c=" + filter.categories.map(\.rawValue).sorted().joined(separator: ","),
            "k=" + filter.conditions.map(\.rawValue).sorted().joined(separator: ","),
            "p=\(filter.minPriceCents.map(String.init) ?? "")-\(filter.maxPriceCents.map(String.init) ?? "")",
            "t=" + filter.tags.map(ListingRules.normalizedTag).sorted().joined(separator: ","),
            "m=\(filter.madeOnCampus.map { $0 ? "1" : "0" } ?? "")",
            "u=" + (filter.sellerID ?? ""),
            "st=" + filter.effectiveStatuses.map(\.rawValue).sorted().joined(separator: ","),
        ]
        if let near = filter.near {
            parts.append("n=\(near.center.latitude),\(near.center.longitude),\(near.radiusKm)")
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in parts.joined(separator: "|").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    @Test("Every kind of query gets the fingerprint of the original definition")
    func sameAsFirstDefined() throws {
        var random = SystemRandomNumberGenerator()
        func some<T>(_ values: [T]) -> [T] { values.filter { _ in Bool.random(using: &random) } }
        for _ in 0..<1_000 {
            var filter = ListingFilter()
            filter.categories = Set(some(ListingCategory.allCases))
            filter.conditions = Set(some(ListingCondition.allCases))
            filter.minPriceCents = Bool.random(using: &random) ? Int64.random(in: 0...9_999, using: &random) : nil
            filter.maxPriceCents = Bool.random(using: &random) ? Int64.random(in: 0...99_999, using: &random) : nil
            filter.tags = some(["Desk", "lamp", "ikea", "Vintage"])
            filter.madeOnCampus = [nil, true, false].randomElement(using: &random)!
            filter.sellerID = Bool.random(using: &random) ? "usr_\(Int.random(in: 0...9, using: &random))" : nil
            filter.statuses = Set(some(ListingStatus.allCases))
            if Bool.random(using: &random) {
                let center = GeoPoint(latitude: Double.random(in: -80...80), longitude: Double.random(in: -170...170))
                filter.near = GeoCircle(center: center, radiusKm: Double.random(in: 0.5...50))
            }
            let query = ListingQuery(
                text: some(["Desk", "lamp", "Crème", "x2"]).joined(separator: " "),
                filter: filter,
                sort: ListingSort.allCases.randomElement(using: &random)!,
                viewerID: Bool.random(using: &random) ? "usr_viewer" : nil,
                postedWithinDays: Int.random(in: 0...30, using: &random)
            )
            let compiled = try CompiledListingQuery(query, page: PageRequest())
            #expect(compiled.fingerprint == Self.reference(query), "\(query)")
        }
    }
}
