import SkiffDomain
import Testing

@Suite("InvertedIndex")
struct InvertedIndexTests {
    static func index() -> InvertedIndex<String> {
        var index = InvertedIndex<String>()
        index.insert("a", tokens: ["lamp", "desk", "oak"])
        index.insert("b", tokens: ["lamp", "desks"])
        index.insert("c", tokens: ["lamp", "chair"])
        index.insert("d", tokens: ["desk", "chair"])
        index.insert("e", tokens: ["lampshade"])
        return index
    }

    @Test("documents(matching:) is exact: every term, the last one as a prefix")
    func exact() {
        let index = Self.index()
        #expect(index.documents(matching: ["lamp", "desk"]) == ["a", "b"])
        #expect(index.documents(matching: ["lamp"]) == ["a", "b", "c", "e"])
        #expect(index.documents(matching: ["chair", "des"]) == ["d"])
        #expect(index.documents(matching: ["oak", "zebra"]).isEmpty)
    }

    @Test("A prefix's count reads at most prefixCountTokens tokens: a prefix of more counts as common")
    func prefixCountIsBounded() {
        var index = InvertedIndex<Int>()
        // 1,000 rare tokens starting with "w" (one document each), and three starting with "x".
        for number in 0..<1_000 { index.insert(number, tokens: ["w\(number)"]) }
        for number in 0..<3 { index.insert(2_000 + number, tokens: ["x\(number)", "x"]) }
        #expect(index.count(prefix: "w", limit: 100_000) == 100_001)
        #expect(index.count(prefix: "w", limit: 50) == 51)  // passes the limit before the token bound
        #expect(index.count(prefix: "w99", limit: 100_000) == 11)  // w99 and w990…w999
        #expect(index.count(prefix: "x", limit: 100_000) == 6)  // "x" (3), x0, x1, x2
        // The documents themselves are still every match.
        #expect(index.documents(prefix: "w").count == 1_000)
        #expect(index.estimatedCount(matching: ["x", "w"], limit: 100_000) == 3)
    }

    @Test("superset(matching:) holds every match, costs the rarest term, and its count says its size")
    func superset() {
        let index = Self.index()
        for terms in [
            ["lamp", "desk"], ["lamp"], ["chair", "des"], ["oak", "l"], ["lamp", "chair", "d"], ["zebra", "l"],
            ["desk"],
            ["l"], ["zebra"], ["lamp", "zebra"],
        ] {
            let superset = index.superset(matching: terms)
            #expect(superset.isSuperset(of: index.documents(matching: terms)), "\(terms)")
            #expect(index.supersetCount(matching: terms, limit: 100) == superset.count, "\(terms)")
        }
        // The rarest whole term's postings, not the union of the prefix's.
        #expect(index.superset(matching: ["oak", "l"]) == ["a"])
        // The prefix's union when it is rarer than every whole term.
        #expect(index.superset(matching: ["lamp", "ch"]) == ["c", "d"])
        #expect(index.superset(matching: ["zebra", "l"]).isEmpty)
    }
}
