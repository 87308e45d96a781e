public import Foundation
import SkiffCore

/// Stores session tokens per server in `$XDG_CONFIG_HOME/skiff/sessions.json` (or
/// `~/.config/skiff/sessions.json`), readable by the user only (mode 0600, directory 0700).
public struct SessionStore: Sendable {
    /// The file holding the tokens.
    public let fileURL: URL

    /// The store in the user's config directory, from `XDG_CONFIG_HOME` or `HOME`.
    public init(environment: [String: String]) {
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg)
        } else {
            let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
            base = URL(fileURLWithPath: home).appendingPathComponent(".config")
        }
        self.fileURL = base.appendingPathComponent("skiff").appendingPathComponent("sessions.json")
    }

    /// Every stored token by server (`HOST:PORT`).
    public func tokens() throws -> [String: String] {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return [:] }
        return try JSONDecoder().decode([String: String].self, from: Data(contentsOf: fileURL))
    }

    /// The token stored for a server, if any.
    public func token(for server: String) throws -> String? { try tokens()[server] }

    /// Stores (or, with nil, removes) a server's token, writing the file with mode 0600.
    public func setToken(_ token: String?, for server: String) throws {
        var tokens = try tokens()
        tokens[server] = token
        let directory = fileURL.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(tokens)
        if !FileManager.default.fileExists(atPath: fileURL.path) {
            guard
                FileManager.default.createFile(
                    atPath: fileURL.path,
                    contents: nil,
                    attributes: [.posixPermissions: 0o600]
                )
            else { throw CLIError(.internal, "Cannot create \(fileURL.path).") }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fileURL.path)
        let handle = try FileHandle(forWritingTo: fileURL)
        defer { try? handle.close() }
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
    }
}
