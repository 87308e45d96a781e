/// Token → documents, with the vocabulary kept sorted so that a prefix is a range: the in-memory stores'
/// keyword index (the role FTS5 plays in SQLite).
///
/// Documents are identified by a key of the caller's choice (an id, or a store's dense slot number); a
/// document's tokens are given as a set when it is indexed and again when it is removed. The methods are
/// inlinable so that a caller's document type is specialized, not handled through witness tables.
package struct InvertedIndex<Document: Hashable & Sendable>: Sendable {
    @usableFromInline var postings: [String: Set<Document>] = [:]
    @usableFromInline var vocabulary = SortedKeys<String> { $0.utf8.lexicographicallyPrecedes($1.utf8) }

    /// Creates an empty index.
    @inlinable package init() {}

    /// Indexes a document under its distinct tokens.
    @inlinable package mutating func insert(_ id: Document, tokens: Set<String>) {
        for token in tokens where postings[token, default: []].insert(id).inserted && postings[token]?.count == 1 {
            vocabulary.insert(token)
        }
    }

    /// Removes a document indexed under `tokens`.
    @inlinable package mutating func remove(_ id: Document, tokens: Set<String>) {
        for token in tokens {
            postings[token]?.remove(id)
            if postings[token]?.isEmpty == true {
                postings[token] = nil
                vocabulary.remove(token) { $0 == token }
            }
        }
    }

    /// The documents holding `token`.
    @inlinable package func documents(_ token: String) -> Set<Document> { postings[token] ?? [] }

    /// The documents holding a token that starts with `prefix` (UTF-8 bytes).
    @inlinable package func documents(prefix: String) -> Set<Document> {
        var union: Set<Document> = []
        vocabulary.walk(from: vocabulary.position(of: prefix)) { token in
            guard token.utf8.starts(with: prefix.utf8) else { return false }
            union.formUnion(postings[token] ?? [])
            return true
        }
        return union
    }

    /// Calls `body` with each token matching `term` and its documents: the token equal to it, or with
    /// `prefix`, every token starting with it (UTF-8 bytes). Their union is the documents matching the term.
    @inlinable package func forEachPosting(
        matching term: String,
        prefix: Bool,
        _ body: (_ token: String, _ documents: Set<Document>) -> Void
    ) {
        guard prefix else {
            if let documents = postings[term] { body(term, documents) }
            return
        }
        vocabulary.walk(from: vocabulary.position(of: term)) { token in
            guard token.utf8.starts(with: term.utf8) else { return false }
            if let documents = postings[token] { body(token, documents) }
            return true
        }
    }

    /// How many documents hold `token`.
    @inlinable package func count(_ token: String) -> Int { postings[token]?.count ?? 0 }

    /// The most tokens ``count(prefix:limit:)`` reads before it calls a prefix common.
    package static var prefixCountTokens: Int { 256 }

    /// An upper bound on how many documents hold a token starting with `prefix`, counted until it passes
    /// `limit`: a short prefix costs no more than that, nor more than ``prefixCountTokens`` tokens read (a
    /// prefix of more tokens counts as `limit + 1`, common, whatever their documents).
    @inlinable package func count(prefix: String, limit: Int) -> Int {
        var total = 0
        var tokens = 0
        vocabulary.walk(from: vocabulary.position(of: prefix)) { token in
            guard token.utf8.starts(with: prefix.utf8) else { return false }
            tokens += 1
            guard tokens <= Self.prefixCountTokens else {
                total = max(total, limit + 1)
                return false
            }
            total += postings[token]?.count ?? 0
            return total <= limit
        }
        return total
    }

    /// An upper bound on how many documents match every term (the smallest term's count), counted up to
    /// about `limit`: what decides whether materializing the matches is cheaper than checking documents
    /// one by one in another order.
    @inlinable package func estimatedCount(matching terms: [String], limit: Int) -> Int {
        var smallest = Int.max
        for (position, term) in terms.enumerated() {
            let count = position == terms.count - 1 ? count(prefix: term, limit: min(limit, smallest)) : count(term)
            smallest = min(smallest, count)
        }
        return smallest == Int.max ? 0 : smallest
    }

    /// The cheapest set that holds every document matching the terms (a superset, for callers that check
    /// each document's own tokens afterwards), and its size: the postings of the rarest whole term, or
    /// the union over the last term's prefix when it is the only term or is rarer. Costs no more than one
    /// term's postings, where ``documents(matching:)`` reads every term's.
    @inlinable package func superset(matching terms: [String]) -> Set<Document> {
        var best: Set<Document>?
        for term in terms.dropLast() {
            let set = documents(term)
            if best == nil || set.count < best!.count { best = set }
        }
        guard let last = terms.last else { return best ?? [] }
        if let best, best.count <= count(prefix: last, limit: best.count) { return best }
        return documents(prefix: last)
    }

    /// The size of ``superset(matching:)``, without building it (a prefix counted up to `limit`).
    @inlinable package func supersetCount(matching terms: [String], limit: Int) -> Int {
        var best = Int.max
        for term in terms.dropLast() { best = min(best, count(term)) }
        guard let last = terms.last else { return best == Int.max ? 0 : best }
        return min(best, count(prefix: last, limit: min(best, limit)))
    }

    /// The documents matching every term, the last one as a prefix (``TextSearch``'s rule): exactly the
    /// documents whose indexed tokens match.
    @inlinable package func documents(matching terms: [String]) -> Set<Document> {
        var sets = terms.enumerated().map { position, term in
            position == terms.count - 1 ? documents(prefix: term) : documents(term)
        }
        sets.sort { $0.count < $1.count }
        guard var result = sets.first else { return [] }
        for set in sets.dropFirst() where !result.isEmpty { result.formIntersection(set) }
        return result
    }
}

/// Points → documents in a fixed latitude/longitude grid: the in-memory stores' spatial index.
package struct GridIndex<Document: Hashable & Sendable>: Sendable {
    /// A cell of the grid.
    package struct Cell: Hashable, Sendable {
        @usableFromInline var row: Int
        @usableFromInline var column: Int

        @inlinable init(row: Int, column: Int) {
            self.row = row
            self.column = column
        }
    }

    /// The default cell size, in degrees of latitude and longitude (about 1.1 km of latitude).
    package static var cellDegrees: Double { 0.01 }
    /// The default for ``maximumCellsPerQuery``.
    package static var maximumCellsPerQuery: Int { 40_000 }

    /// The cell size of this grid, in degrees.
    package let cellDegrees: Double
    /// The most cells a box may cover before ``documents(latitude:longitude:)`` gives up (returns `nil`): such a box holds so much that other
    /// indexes, or a scan, are no worse.
    package let maximumCellsPerQuery: Int

    @usableFromInline var cells: [Cell: Set<Document>] = [:]

    /// Creates an empty index with cells of `cellDegrees` degrees.
    package init(
        cellDegrees: Double = GridIndex.cellDegrees,
        maximumCellsPerQuery: Int = GridIndex.maximumCellsPerQuery
    ) {
        self.cellDegrees = cellDegrees
        self.maximumCellsPerQuery = maximumCellsPerQuery
    }

    /// Whether no document is indexed.
    @inlinable package var isEmpty: Bool { cells.isEmpty }

    /// The cell of a point.
    @inlinable func cell(latitude: Double, longitude: Double) -> Cell {
        Cell(row: Int((latitude / cellDegrees).rounded(.down)), column: Int((longitude / cellDegrees).rounded(.down)))
    }

    /// Indexes a document at a point.
    @inlinable package mutating func insert(_ id: Document, latitude: Double, longitude: Double) {
        cells[cell(latitude: latitude, longitude: longitude), default: []].insert(id)
    }

    /// Removes a document indexed at a point.
    @inlinable package mutating func remove(_ id: Document, latitude: Double, longitude: Double) {
        let cell = cell(latitude: latitude, longitude: longitude)
        cells[cell]?.remove(id)
        if cells[cell]?.isEmpty == true { cells[cell] = nil }
    }

    /// How many documents the cells a box covers hold (as ``documents(latitude:longitude:)`` would return,
    /// without building the set), or `nil` when that would return `nil`.
    @inlinable package func count(latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) -> Int? {
        var total = 0
        guard visit(latitude: latitude, longitude: longitude, { total += $0.count }) else { return nil }
        return total
    }

    /// The documents in the cells a box covers (a superset of those inside it), or `nil` when the box wraps
    /// around the antimeridian (`longitude` is `nil`) or covers more than ``maximumCellsPerQuery`` cells.
    @inlinable package func documents(latitude: ClosedRange<Double>, longitude: ClosedRange<Double>?) -> Set<Document>?
    {
        var result: Set<Document> = []
        guard visit(latitude: latitude, longitude: longitude, { result.formUnion($0) }) else { return nil }
        return result
    }

    /// Calls `body` with each document in the cells a box covers (without building a set); `false` (and no
    /// call) when ``documents(latitude:longitude:)`` would return `nil`.
    @inlinable package func forEachDocument(
        latitude: ClosedRange<Double>,
        longitude: ClosedRange<Double>?,
        _ body: (Document) -> Void
    ) -> Bool {
        visit(latitude: latitude, longitude: longitude) { ids in for id in ids { body(id) } }
    }

    /// Calls `body` with the documents of each non-empty cell the box covers; `false` when the box wraps
    /// or covers too many cells.
    @inlinable func visit(
        latitude: ClosedRange<Double>,
        longitude: ClosedRange<Double>?,
        _ body: (Set<Document>) -> Void
    ) -> Bool {
        guard let longitude else { return false }
        let low = cell(latitude: latitude.lowerBound, longitude: longitude.lowerBound)
        let high = cell(latitude: latitude.upperBound, longitude: longitude.upperBound)
        let rows = high.row - low.row + 1
        let columns = high.column - low.column + 1
        let covered = rows.multipliedReportingOverflow(by: columns)
        guard rows > 0, columns > 0, !covered.overflow, covered.partialValue <= maximumCellsPerQuery else {
            return false
        }
        if covered.partialValue > cells.count {
            for (cell, ids) in cells
            where (low.row...high.row).contains(cell.row) && (low.column...high.column).contains(cell.column) {
                body(ids)
            }
            return true
        }
        for row in low.row...high.row {
            for column in low.column...high.column {
                if let ids = cells[Cell(row: row, column: column)] { body(ids) }
            }
        }
        return true
    }
}
