import Foundation
public import Logging

/// The log levels of `--log-level`: one for every logger, and optionally others for loggers by label.
///
/// The text is `LEVEL[,LABEL=LEVEL…]`, for example `info,skiff.mail=debug`: everything at info, and the
/// mail outbox (label `skiff.mail`, whose debug lines carry mail bodies) at debug. A label names a
/// logger and the loggers below it (`skiff.mail` also sets `skiff.mail.smtp`); the longest match wins.
public struct LogLevels: Equatable, Sendable {
    /// The level of loggers no label names.
    public var base: Logger.Level
    /// Levels by label.
    public var byLabel: [String: Logger.Level]

    /// The most labels the option accepts.
    public static let maximumLabels = 32

    /// Creates levels from their parts.
    public init(base: Logger.Level, byLabel: [String: Logger.Level] = [:]) {
        self.base = base
        self.byLabel = byLabel
    }

    /// Parses `LEVEL[,LABEL=LEVEL…]`.
    ///
    /// - Throws: ``Invalid`` naming the part to fix: an unknown level, an empty label, or more than
    ///   ``maximumLabels`` labels.
    public init(parsing text: String) throws(Invalid) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count <= Self.maximumLabels + 1 else {
            throw Invalid("--log-level names more than \(Self.maximumLabels) labels.")
        }
        base = try Self.level(parts[0])
        byLabel = [:]
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, !pair[0].isEmpty, pair[0].utf8.count <= 128 else {
                throw Invalid(
                    "--log-level: \(Self.quoted(part)) is not LABEL=LEVEL (for example skiff.mail=debug)."
                )
            }
            byLabel[String(pair[0])] = try Self.level(pair[1])
        }
    }

    /// The level of the logger labelled `label`.
    public func level(for label: String) -> Logger.Level {
        var candidate = Substring(label)
        while true {
            if let level = byLabel[String(candidate)] { return level }
            guard let dot = candidate.lastIndex(of: ".") else { return base }
            candidate = candidate[..<dot]
        }
    }

    /// Why a `--log-level` text was refused.
    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private static func level(_ text: some StringProtocol) throws(Invalid) -> Logger.Level {
        guard let level = Logger.Level(rawValue: String(text)) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw Invalid("--log-level: \(quoted(text)) is not a level; use one of \(names).")
        }
        return level
    }

    /// At most 40 characters of what the operator typed.
    private static func quoted(_ text: some StringProtocol) -> String {
        text.count > 40 ? "\"\(text.prefix(40))…\"" : "\"\(text)\""
    }
}
