/// Accumulates generated source, one line at a time, with four-space indentation.
struct SourceWriter {
    private(set) var contents = ""
    private var indentation = 0

    /// Appends a line at the current indentation; an empty string appends an empty line.
    mutating func line(_ text: String = "") {
        if !text.isEmpty { contents += String(repeating: "    ", count: indentation) + text }
        contents += "\n"
    }

    /// Appends several lines, each at the current indentation.
    mutating func lines(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) { self.line(String(line)) }
    }

    /// Appends `header {`, the body indented one level, then `}` (or other brackets).
    mutating func block(
        _ header: String,
        opening: String = "{",
        closing: String = "}",
        _ body: (inout SourceWriter) throws -> Void
    ) rethrows {
        line(opening.isEmpty ? header : header + " " + opening)
        indentation += 1
        try body(&self)
        indentation -= 1
        line(closing)
    }
}
