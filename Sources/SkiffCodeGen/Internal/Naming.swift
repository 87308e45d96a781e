import SwiftProtobufPluginLibrary

/// Swift spellings of proto names.
enum Naming {
    /// Keywords that must be escaped with backticks to be used as a function name.
    static let keywords: Set<String> =
        swiftKeywordsUsedInDeclarations
        .union(swiftKeywordsUsedInStatements)
        .union(swiftKeywordsUsedInExpressionsAndTypes)
        .union(["async", "await", "consume", "copy", "discard", "each", "some", "any"])

    /// Names a generated type must not take: they would shadow what generated code relies on.
    static let reservedTypeNames: Set<String> =
        keywords
        .union(swiftCommonTypes)
        .union(["Type", "Protocol", "Swift", "SwiftProtobuf", "SkiffCore", "Sendable", "Equatable", "Hashable"])

    /// lowerCamelCase of an RPC name, as grpc-swift spells it: the leading run of capitals is
    /// lowercased, except the last one when a lowercase letter follows it
    /// (`UnaryCall` → `unaryCall`, `GetURL` → `getURL`, `URLFetch` → `urlFetch`).
    static func lowerCamelCase(_ name: String) -> String {
        let characters = Array(name)
        var run = 0
        while run < characters.count, characters[run].isASCII, characters[run].isUppercase { run += 1 }
        var lowered = run
        if run > 1, run < characters.count, characters[run].isLowercase { lowered = run - 1 }
        return characters[..<lowered].map { $0.lowercased() }.joined() + String(characters[lowered...])
    }

    /// The name wrapped in backticks if it is a Swift keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// The name of a type nested in generated code: reserved names get a suffix, keywords backticks.
    static func nestedTypeName(_ name: String) -> String {
        if ["Type", "Protocol", "Self", "Any"].contains(name) { return name + "_" }
        return escaped(name)
    }

    /// A Swift string literal holding the text.
    static func stringLiteral(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
