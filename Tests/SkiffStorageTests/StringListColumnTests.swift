import Foundation
import Testing

@testable import SkiffSQLite

@Suite("String list column")
struct StringListColumnTests {
    @Test("Lists round-trip through the column text, escapes and all; the text is JSON SQLite can read")
    func roundTrip() throws {
        let samples: [[String]] = [
            [], [""], ["a"], ["oak", "blue"], ["a/b", "ünïcödé", "😀"], ["say \"hi\""], ["back\\slash"],
            ["tab\there", "line\nbreak"], ["\",\""], ["[\"", "\"]"], ["a\", \"b"],
        ]
        for strings in samples {
            let text = StringListColumn.text(strings)
            #expect(StringListColumn.strings(text) == strings, "\(strings) → \(text)")
            let decoded = try JSONDecoder().decode([String].self, from: Data(text.utf8))
            #expect(decoded == strings, "\(text) is the JSON of \(strings)")
        }
        // Text written by JSONEncoder (older rows: "/" escaped) still reads.
        #expect(StringListColumn.strings(#"["a\/b","c"]"#) == ["a/b", "c"])
        #expect(StringListColumn.strings("not json") == [])
    }
}
