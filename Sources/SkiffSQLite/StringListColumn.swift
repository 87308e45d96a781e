import Foundation

/// A list of strings kept in one TEXT column as a JSON array (tags, image ids): written and read on every
/// row of a page, so the common case — no character that JSON escapes — skips the JSON coders.
enum StringListColumn {
    /// The JSON array text of `strings`.
    static func text(_ strings: [String]) -> String {
        guard !strings.isEmpty else { return "[]" }
        let plain = strings.allSatisfy { string in
            string.unicodeScalars.allSatisfy { $0 != "\"" && $0 != "\\" && $0.value >= 0x20 }
        }
        if plain { return "[\"" + strings.joined(separator: "\",\"") + "\"]" }
        return (try? JSONEncoder().encode(strings)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// The strings of a JSON array text; empty if it is not one.
    static func strings(_ text: String) -> [String] {
        if text == "[]" { return [] }
        // Without a backslash no element holds an escaped quote, so `","` only separates elements.
        if text.hasPrefix("[\""), text.hasSuffix("\"]"), text.utf8.count >= 4,
            !text.utf8.contains(UInt8(ascii: "\\")), !text.contains("\", \"")
        {
            return text.dropFirst(2).dropLast(2).components(separatedBy: "\",\"")
        }
        return (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }
}
