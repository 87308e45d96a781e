import Foundation
import SkiffDomain

/// The one tokenizer of listing search, shared by every backend so that they match identically; the
/// tokenizer itself is `SkiffDomain.TextSearch`, shared with LostFound.
///
/// A token is a maximal run of letters and numbers (Unicode general categories L*, N* and Co, the
/// categories SQLite FTS5's `unicode61` tokenizer keeps) after folding case, diacritics and width:
/// "Crème-Brûlée x2" → `["creme", "brulee", "x2"]`. SQLite indexes the tokens this function produces
/// (joined by spaces), so FTS5 sees text it cannot split further, and candidates it returns are checked
/// again with ``matches(tokens:terms:)``: the in-memory store and SQLite return exactly the same rows.
package enum SearchText {
    /// The tokens of a text, in order, with repeats.
    package static func tokens(_ text: String) -> [String] {
        TextSearch.tokens(text)
    }

    /// The text SQLite indexes for a field: its tokens joined by single spaces.
    package static func indexText(_ text: String) -> String {
        tokens(text).joined(separator: " ")
    }

    /// The text SQLite indexes for tags.
    package static func indexText(tags: [String]) -> String {
        tags.flatMap(tokens).joined(separator: " ")
    }

    /// The key titles are sorted by (folded, lowercase, NFC), compared by UTF-8 bytes.
    package static func sortKey(_ title: String) -> String {
        title.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            .lowercased()
            .precomposedStringWithCanonicalMapping
    }

    /// The FTS5 MATCH expression for query terms (``TextSearch/ftsExpression(_:)``).
    package static func ftsExpression(_ terms: [String]) -> String { TextSearch.ftsExpression(terms) }

    /// Whether a term matches a token: equal, or for the query's last term a prefix of it.
    static func term(_ term: String, matches token: String, prefix: Bool) -> Bool {
        prefix ? token.utf8.starts(with: term.utf8) : token == term
    }

    /// The tokens of a listing's searchable fields: title, description and tags.
    package struct DocumentTokens: Sendable {
        package var title: [String]
        package var description: [String]
        package var tags: [String]

        package init(_ fields: ListingFields) {
            title = SearchText.tokens(fields.title)
            description = SearchText.tokens(fields.description)
            tags = fields.tags.flatMap(SearchText.tokens)
        }
    }

    /// Whether every term matches some token of the document (the last term as a prefix).
    package static func matches(tokens: DocumentTokens, terms: [String]) -> Bool {
        for (index, query) in terms.enumerated() {
            let prefix = index == terms.count - 1
            let found =
                tokens.title.contains { term(query, matches: $0, prefix: prefix) }
                || tokens.tags.contains { term(query, matches: $0, prefix: prefix) }
                || tokens.description.contains { term(query, matches: $0, prefix: prefix) }
            if !found { return false }
        }
        return true
    }

    /// The relevance score used by RELEVANCE sort on every backend (instead of SQLite's bm25, which the
    /// in-memory store could not reproduce exactly): per term, 3 points for each matching title token,
    /// 2 for each matching tag token and 1 for each matching description token. An integer, so equal
    /// data gives equal scores everywhere.
    package static func score(of tokens: DocumentTokens, terms: [String]) -> Int {
        var score = 0
        for (index, query) in terms.enumerated() {
            let prefix = index == terms.count - 1
            score += 3 * tokens.title.count(where: { term(query, matches: $0, prefix: prefix) })
            score += 2 * tokens.tags.count(where: { term(query, matches: $0, prefix: prefix) })
            score += tokens.description.count(where: { term(query, matches: $0, prefix: prefix) })
        }
        return score
    }
}
