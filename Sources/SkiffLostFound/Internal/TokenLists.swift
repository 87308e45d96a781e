import SkiffDomain

/// The in-memory store's keyword index: for each token and category, the items holding the token, newest
/// first. A keyword search walks the lists of its rarest term in the categories it asks for, newest first,
/// so its cost follows the page, and a term that is common in one category but absent from the others
/// costs nothing in those.
struct TokenLists: Sendable {
    typealias Key = LostFoundIndex.NewestKey

    private var lists: [String: [LostFoundCategory: SortedKeys<Key>]] = [:]
    /// The tokens, in UTF-8 order: a prefix's tokens are a range of it.
    private var vocabulary = SortedKeys<String> { $0.utf8.lexicographicallyPrecedes($1.utf8) }

    /// Adds an item's key under each of its distinct tokens.
    mutating func insert(_ key: Key, tokens: Set<String>, category: LostFoundCategory) {
        for token in tokens {
            if lists[token] == nil { vocabulary.insert(token) }
            lists[token, default: [:]][category, default: SortedKeys(by: LostFoundIndex.newestFirst)].insert(key)
        }
    }

    /// Removes an item's key as ``insert(_:tokens:category:)`` added it.
    mutating func remove(_ key: Key, tokens: Set<String>, category: LostFoundCategory) {
        for token in tokens {
            lists[token]?[category]?.remove(key) { $0.id == key.id }
            if lists[token]?[category]?.count == 0 { lists[token]?[category] = nil }
            if lists[token]?.isEmpty == true {
                lists[token] = nil
                vocabulary.remove(token) { $0 == token }
            }
        }
    }

    /// The lists of the items holding `term` (or, with `prefix`, a token starting with it) in `categories`
    /// (all when empty), and how many keys they hold together. With `prefix`, stops once the count passes
    /// `limit`: the lists are then incomplete.
    func lists(
        matching term: String,
        prefix: Bool,
        categories: Set<LostFoundCategory>,
        limit: Int
    ) -> (lists: [SortedKeys<Key>], count: Int) {
        var result: [SortedKeys<Key>] = []
        var count = 0
        func add(_ token: String) {
            guard let byCategory = lists[token] else { return }
            for (category, list) in byCategory where categories.isEmpty || categories.contains(category) {
                result.append(list)
                count += list.count
            }
        }
        guard prefix else {
            add(term)
            return (result, count)
        }
        vocabulary.walk(from: vocabulary.position(of: term)) { token in
            guard token.utf8.starts(with: term.utf8) else { return false }
            add(token)
            return count <= limit
        }
        return (result, count)
    }

    /// The lists of the rarest of `terms` (the last one as a prefix) in `categories`, and their size:
    /// every item matching all the terms is in them. `others` are the other terms' counts, for estimating
    /// how many items match them all; a term is counted only until it is no rarer than the rarest so far
    /// (so a short prefix costs no more than the lists of a rarer term), or than `limit` (the size of a set
    /// the caller would walk instead), and its count is then a lower bound and its lists incomplete.
    func rarest(
        _ terms: [String],
        categories: Set<LostFoundCategory>,
        limit: Int
    ) -> (lists: [SortedKeys<Key>], count: Int, others: [Int]) {
        var best: (lists: [SortedKeys<Key>], count: Int)?
        var others: [Int] = []
        for (position, term) in terms.enumerated() {
            // Complete unless its count passed the best one's, when it is not chosen.
            let found = lists(
                matching: term,
                prefix: position == terms.count - 1,
                categories: categories,
                limit: best?.count ?? limit
            )
            if let current = best, current.count <= found.count {
                others.append(found.count)
            } else {
                if let current = best { others.append(current.count) }
                best = found
            }
        }
        return best.map { ($0.lists, $0.count, others) } ?? ([], 0, [])
    }
}
