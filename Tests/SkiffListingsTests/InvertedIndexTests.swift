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
